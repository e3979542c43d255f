"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { CopyButton } from "@/components/ui/copy-button";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** API keys: the list (start, scope, creator, last use), a new key shown exactly once, revoke (confirmed). */
export function KeysPanel({ workspace, canManage }: { workspace: string; canManage: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.keys.list.queryOptions({ workspace }));
  const [shown, setShown] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.keys.list.queryKey({ workspace }) });
  const create = useMutation(
    trpc.keys.create.mutationOptions({
      onSuccess: (made) => {
        setShown(made.key);
        toast.success("Key created: copy it now, it is shown once");
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.keys.revoke.mutationOptions());
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const tools = String(form.get("tools") ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    const group = String(form.get("group") ?? "").trim();
    create.reset();
    create.mutate({
      workspace,
      name: String(form.get("name") ?? "") || undefined,
      group: group === "" ? undefined : group,
      tools: tools.length === 0 ? undefined : tools,
    });
  }
  return (
    <div className="space-y-6">
      {shown !== null && (
        <Card role="status" className="border-warning/60">
          <CardHeader>
            <CardTitle>Your new key</CardTitle>
            <CardDescription>This key is shown once. Copy it now and keep it secret.</CardDescription>
          </CardHeader>
          <CardContent className="flex flex-wrap items-center gap-2">
            <code
              className="min-w-0 flex-1 rounded-md bg-muted px-3 py-2 font-mono text-sm break-all"
              data-testid="new-key"
            >
              {shown}
            </code>
            <CopyButton value={shown} label="Copy key" />
            {/* H2: the Connect dialog, filled with this key, opens here. */}
          </CardContent>
        </Card>
      )}
      {keys.isPending && <Skeleton className="h-32" />}
      <ErrorText error={keys.error} prefix="Could not load keys: " />
      {keys.data?.length === 0 && (
        <EmptyState
          title="No keys yet"
          description={
            canManage ? "Create a key below to call the API or connect an agent." : "An owner or admin creates keys."
          }
        />
      )}
      {keys.data !== undefined && keys.data.length > 0 && (
        <Card>
          <Table>
            <TableHeader>
              <TableRow>
                <TableHead>Key</TableHead>
                <TableHead>Scope</TableHead>
                <TableHead className="hidden lg:table-cell">Created by</TableHead>
                <TableHead className="hidden md:table-cell">Last used</TableHead>
                <TableHead className="w-24">
                  <span className="sr-only">Status</span>
                </TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {keys.data.map((k) => (
                <TableRow key={k.id}>
                  <TableCell>
                    <span className="block font-medium">{k.name ?? "Unnamed key"}</span>
                    <span className="font-mono text-xs text-muted-foreground">{k.start}…</span>
                  </TableCell>
                  <TableCell className="max-w-64 text-muted-foreground">
                    <span className="block truncate">{k.group ?? "every group"}</span>
                    <span className="block truncate text-xs">
                      {k.tools === null ? "every tool" : k.tools.join(", ")}
                    </span>
                  </TableCell>
                  <TableCell className="hidden max-w-48 truncate text-muted-foreground lg:table-cell">
                    {k.created_by ?? "—"}
                  </TableCell>
                  <TableCell className="hidden text-muted-foreground md:table-cell">
                    {k.last_used_at === null ? (
                      "never"
                    ) : (
                      <time dateTime={new Date(k.last_used_at).toISOString()} title={formatDate(k.last_used_at)}>
                        {formatRelative(k.last_used_at)}
                      </time>
                    )}
                  </TableCell>
                  <TableCell className="text-right">
                    {k.revoked_at !== null ? (
                      <Badge variant="outline">revoked</Badge>
                    ) : (
                      canManage && (
                        <ConfirmDialog
                          trigger={
                            <Button variant="outline" size="sm" aria-label={`Revoke key ${k.start}`}>
                              Revoke
                            </Button>
                          }
                          title={`Revoke ${k.name ?? `key ${k.start}…`}?`}
                          description="Every call made with this key fails from now on (401). This cannot be undone."
                          confirmLabel="Revoke key"
                          onConfirm={async () => {
                            await revoke.mutateAsync({ workspace, id: k.id });
                            toast.success(`Key ${k.start}… revoked`);
                            await refresh();
                          }}
                        />
                      )
                    )}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Card>
      )}
      {canManage && (
        <Card>
          <CardHeader>
            <CardTitle>New key</CardTitle>
            <CardDescription>
              Scope it to one group and a few tools for an agent; leave both empty for full access.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <form onSubmit={submit} className="grid gap-3 md:grid-cols-[1fr_1fr_1.5fr_auto] md:items-end">
              <div className="grid gap-1.5">
                <Label htmlFor="key-name">Name</Label>
                <Input id="key-name" name="name" placeholder="e.g. ci" />
              </div>
              <div className="grid gap-1.5">
                <Label htmlFor="key-group">Group (empty: every group)</Label>
                <Input id="key-group" name="group" />
              </div>
              <div className="grid gap-1.5">
                <Label htmlFor="key-tools">Tools (comma-separated, e.g. kv_*, db_query; empty: every tool)</Label>
                <Input id="key-tools" name="tools" />
              </div>
              <Button type="submit" disabled={create.isPending}>
                Create key
              </Button>
              <ErrorText error={create.error} className="md:col-span-4" />
            </form>
          </CardContent>
        </Card>
      )}
    </div>
  );
}
