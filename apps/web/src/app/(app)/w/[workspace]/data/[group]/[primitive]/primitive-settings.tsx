"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

type Info = { id: string; name: string; type: string; group: string; paused: boolean };

/** The "Settings" tab: fork (data roles); pause/resume, rename and move, delete (admins). */
export function PrimitiveSettings({
  workspace,
  primitive,
  admin,
}: {
  workspace: string;
  primitive: Info;
  admin: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const target = { workspace, primitive: primitive.id };
  const [forkName, setForkName] = useState("");
  const [rename, setRename] = useState(primitive.name);
  const [move, setMove] = useState(primitive.group);
  const changed = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.get.queryKey(target) });
    void queryClient.invalidateQueries({ queryKey: trpc.data.primitives.pathKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.data.groups.queryKey({ workspace }) });
  };
  const pause = useMutation(
    trpc.primitive.pause.mutationOptions({
      onSuccess: (p) => {
        toast.success(p.paused ? `${p.name} paused` : `${p.name} resumed`);
        changed();
      },
    }),
  );
  const fork = useMutation(
    trpc.primitive.fork.mutationOptions({
      onSuccess: (p) => {
        toast.success(`Forked as ${p.name}`);
        setForkName("");
        changed();
      },
    }),
  );
  const update = useMutation(
    trpc.primitive.update.mutationOptions({
      onSuccess: (p) => {
        toast.success(`Now ${p.name} in ${p.group}`);
        changed();
      },
    }),
  );
  const remove = useMutation(trpc.data.deletePrimitive.mutationOptions());
  function submitFork(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    fork.mutate({ ...target, name: forkName.trim() });
  }
  function submitUpdate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = rename.trim();
    const group = move.trim();
    update.mutate({
      ...target,
      name: name === "" || name === primitive.name ? undefined : name,
      group: group === "" || group === primitive.group ? undefined : group,
    });
  }
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Card>
        <CardHeader>
          <CardTitle>Fork</CardTitle>
          <CardDescription>A copy of this primitive's data under a new name.</CardDescription>
        </CardHeader>
        <CardContent>
          <form onSubmit={submitFork} className="flex flex-wrap items-end gap-2">
            <div className="grid min-w-0 flex-1 gap-1.5">
              <Label htmlFor="fork-name">Fork as</Label>
              <Input id="fork-name" value={forkName} onChange={(e) => setForkName(e.target.value)} />
            </div>
            <SubmitButton variant="outline" disabled={fork.isPending || forkName.trim() === ""}>
              Fork
            </SubmitButton>
          </form>
          <ErrorText error={fork.error} className="mt-2" />
        </CardContent>
      </Card>
      {admin && (
        <Card>
          <CardHeader>
            <CardTitle>Rename or move</CardTitle>
            <CardDescription>Keys scoped to the old group lose access when it moves.</CardDescription>
          </CardHeader>
          <CardContent>
            <form onSubmit={submitUpdate} className="grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end">
              <div className="grid gap-1.5">
                <Label htmlFor="rename">Name</Label>
                <Input id="rename" value={rename} onChange={(e) => setRename(e.target.value)} />
              </div>
              <div className="grid gap-1.5">
                <Label htmlFor="move">Group</Label>
                <Input id="move" value={move} onChange={(e) => setMove(e.target.value)} />
              </div>
              <SubmitButton variant="outline" disabled={update.isPending}>
                Apply
              </SubmitButton>
            </form>
            <ErrorText error={update.error} className="mt-2" />
          </CardContent>
        </Card>
      )}
      {admin && (
        <Card>
          <CardHeader>
            <CardTitle>{primitive.paused ? "Paused" : "Pause"}</CardTitle>
            <CardDescription>
              {primitive.paused
                ? "Calls to this primitive are refused until it is resumed."
                : "Refuse every call to this primitive until it is resumed; its data stays."}
            </CardDescription>
          </CardHeader>
          <CardContent>
            <Button
              variant="outline"
              disabled={pause.isPending}
              onClick={() => pause.mutate({ ...target, paused: !primitive.paused })}
            >
              {primitive.paused ? "Resume" : "Pause"}
            </Button>
            <ErrorText error={pause.error} className="mt-2" />
          </CardContent>
        </Card>
      )}
      {admin && (
        <Card className="border-destructive/50">
          <CardHeader>
            <CardTitle>Delete</CardTitle>
            <CardDescription>The primitive with all its data and snapshots. This cannot be undone.</CardDescription>
          </CardHeader>
          <CardContent>
            <ConfirmDialog
              trigger={<Button variant="destructive">Delete {primitive.name}</Button>}
              title={`Delete ${primitive.name}?`}
              description={`The ${primitive.type} primitive with all its data and snapshots is deleted. This cannot be undone.`}
              typedName={primitive.name}
              confirmLabel="Delete"
              onConfirm={async (confirm) => {
                await remove.mutateAsync({ workspace, id: primitive.id, confirm });
                toast.success(`Deleted ${primitive.name}`);
                queryClient.removeQueries({ queryKey: trpc.primitive.get.queryKey(target) });
                void queryClient.invalidateQueries({ queryKey: trpc.data.primitives.pathKey() });
                void queryClient.invalidateQueries({ queryKey: trpc.data.groups.queryKey({ workspace }) });
                router.push(`/w/${workspace}/data/${encodeURIComponent(primitive.group)}`);
              }}
            />
          </CardContent>
        </Card>
      )}
    </div>
  );
}
