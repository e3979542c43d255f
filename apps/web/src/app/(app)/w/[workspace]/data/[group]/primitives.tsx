"use client";
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { Trash2Icon } from "lucide-react";
import Link from "next/link";
import { type FormEvent, useState } from "react";
import { MoreButton } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";
import { Skeleton } from "@/components/ui/skeleton";
import { SubmitButton } from "@/components/ui/submit-button";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { formatBytes, formatDate } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

const TYPES = ["kv", "db", "fs", "queue", "storage", "vault", "memory"] as const;

/** A group's primitives (paged), each opening its page; create; delete after typing the name (admins). */
export function Primitives({ workspace, group, admin }: { workspace: string; group: string; admin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [type, setType] = useState<(typeof TYPES)[number]>("kv");
  const list = useInfiniteQuery(
    trpc.data.primitives.infiniteQueryOptions(
      { workspace, group },
      { getNextPageParam: (last) => last.next_cursor ?? undefined },
    ),
  );
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.data.primitives.pathKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.data.groups.queryKey({ workspace }) });
  };
  const create = useMutation(
    trpc.data.createPrimitive.mutationOptions({
      onSuccess: (created) => {
        toast.success(`Created ${created.name}`);
        setName("");
        refresh();
      },
    }),
  );
  const remove = useMutation(trpc.data.deletePrimitive.mutationOptions());
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({ workspace, group, name: name.trim(), type });
  }
  const items = list.data?.pages.flatMap((p) => p.data) ?? [];
  const base = `/w/${workspace}/data/${encodeURIComponent(group)}`;
  return (
    <div className="space-y-6">
      {list.isPending && <Skeleton className="h-32" />}
      <ErrorText error={list.error} />
      {list.isSuccess && items.length === 0 && (
        <EmptyState title="No primitives in this group" description="Create the first one below." />
      )}
      {items.length > 0 && (
        <Card>
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Name</TableHead>
                <TableHead>Type</TableHead>
                <TableHead className="hidden sm:table-cell">Size</TableHead>
                <TableHead className="hidden md:table-cell">Created</TableHead>
                {admin && (
                  <TableHead className="w-12">
                    <span className="sr-only">Actions</span>
                  </TableHead>
                )}
              </TableRow>
            </TableHeader>
            <TableBody>
              {items.map((p) => (
                <TableRow key={p.id}>
                  <TableCell className="max-w-0 min-w-32">
                    <Link
                      href={`${base}/${p.id}`}
                      className="block truncate font-medium underline-offset-4 hover:underline"
                    >
                      {p.name}
                    </Link>
                  </TableCell>
                  <TableCell>
                    <Badge variant="secondary">{p.type}</Badge>
                    {p.paused && (
                      <Badge variant="warning" className="ml-1">
                        paused
                      </Badge>
                    )}
                  </TableCell>
                  <TableCell className="hidden text-muted-foreground sm:table-cell">
                    {formatBytes(p.size_bytes)}
                  </TableCell>
                  <TableCell className="hidden text-muted-foreground md:table-cell">
                    {formatDate(p.created_at, { time: false })}
                  </TableCell>
                  {admin && (
                    <TableCell>
                      <ConfirmDialog
                        trigger={
                          <Button variant="ghost" size="icon" aria-label={`Delete ${p.name}`}>
                            <Trash2Icon aria-hidden />
                          </Button>
                        }
                        title={`Delete ${p.name}?`}
                        description={`The ${p.type} primitive with all its data and snapshots is deleted. This cannot be undone.`}
                        typedName={p.name}
                        confirmLabel="Delete"
                        onConfirm={async (confirm) => {
                          await remove.mutateAsync({ workspace, id: p.id, confirm });
                          toast.success(`Deleted ${p.name}`);
                          refresh();
                        }}
                      />
                    </TableCell>
                  )}
                </TableRow>
              ))}
            </TableBody>
          </Table>
          <div className="px-2 pb-2">
            <MoreButton query={list} className="mt-2" />
          </div>
        </Card>
      )}
      <Card className="max-w-2xl">
        <CardHeader>
          <CardTitle>New primitive</CardTitle>
        </CardHeader>
        <CardContent>
          <form onSubmit={submit} className="flex flex-wrap items-end gap-2">
            <div className="grid min-w-0 flex-1 gap-1.5">
              <Label htmlFor="primitive-name">Name</Label>
              <Input
                id="primitive-name"
                name="name"
                value={name}
                onChange={(e) => {
                  setName(e.target.value);
                  if (create.isError) create.reset();
                }}
              />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor="primitive-type">Type</Label>
              <NativeSelect
                id="primitive-type"
                name="type"
                value={type}
                onChange={(e) => setType(e.target.value as (typeof TYPES)[number])}
              >
                {TYPES.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </NativeSelect>
            </div>
            <SubmitButton disabled={create.isPending || name.trim() === ""}>Create</SubmitButton>
          </form>
          <ErrorText error={create.error} className="mt-2" />
        </CardContent>
      </Card>
    </div>
  );
}
