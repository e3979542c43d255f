"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { FolderIcon } from "lucide-react";
import Link from "next/link";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import { SubmitButton } from "@/components/ui/submit-button";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** The groups as cards (each opens its page) and, for admins, "New group". */
export function Groups({ workspace, admin }: { workspace: string; admin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const groups = useQuery(trpc.data.groups.queryOptions({ workspace }));
  const create = useMutation(
    trpc.data.createGroup.mutationOptions({
      onSuccess: (_, input) => {
        toast.success(`Group ${input.name} created`);
        setName("");
        void queryClient.invalidateQueries({ queryKey: trpc.data.groups.queryKey({ workspace }) });
      },
    }),
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({ workspace, name: name.trim() });
  }
  return (
    <div className="space-y-6">
      {groups.isPending && (
        <div className="grid gap-3 sm:grid-cols-2 xl:grid-cols-3">
          <Skeleton className="h-20" />
          <Skeleton className="h-20" />
          <Skeleton className="h-20" />
        </div>
      )}
      <ErrorText error={groups.error} />
      {groups.data?.length === 0 && (
        <EmptyState
          title="No groups yet"
          description={
            admin ? "A group holds primitives and scopes keys: create one below." : "An owner or admin creates groups."
          }
        />
      )}
      {groups.data !== undefined && groups.data.length > 0 && (
        <ul className="grid gap-3 sm:grid-cols-2 xl:grid-cols-3">
          {groups.data.map((g) => (
            <li key={g.id}>
              <Link
                href={`/w/${workspace}/data/${encodeURIComponent(g.name)}`}
                className="flex items-center gap-3 rounded-lg border bg-card p-4 outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
              >
                <FolderIcon className="size-5 shrink-0 text-muted-foreground" aria-hidden />
                <span className="min-w-0 flex-1">
                  <span className="block truncate font-medium">{g.name}</span>
                  <span className="block text-sm text-muted-foreground">
                    {g.primitives} primitive{g.primitives === 1 ? "" : "s"}
                  </span>
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
      {admin && (
        <Card className="max-w-xl">
          <CardHeader>
            <CardTitle>New group</CardTitle>
            <CardDescription>Letters, digits, dashes and underscores.</CardDescription>
          </CardHeader>
          <CardContent>
            <form onSubmit={submit} className="flex flex-wrap items-end gap-2">
              <div className="grid min-w-0 flex-1 gap-1.5">
                <Label htmlFor="new-group">Group name</Label>
                <Input
                  id="new-group"
                  name="group"
                  value={name}
                  onChange={(e) => {
                    setName(e.target.value);
                    if (create.isError) create.reset();
                  }}
                  placeholder="e.g. agents"
                />
              </div>
              <SubmitButton disabled={create.isPending || name.trim() === ""}>Create group</SubmitButton>
            </form>
            <ErrorText error={create.error} className="mt-2" />
          </CardContent>
        </Card>
      )}
    </div>
  );
}
