"use client";
import type { SnapshotInfo } from "@prim/wire";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { type FormEvent, useId, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
import { errorCode, errorText } from "@/lib/errors";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";
import { MONO_FIELD, useWorkspaceRole } from "./act";
import { ListState } from "./view-states";

/** The spec's names (NAME_RE in @prim/wire); a snapshot's may not start with `snap_` (ids do). */
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const two = (n: number) => String(n).padStart(2, "0");

/**
 * The default name: the local time as `2026-11-27-08.15.03` (a name holds no spaces or colons:
 * lower-case letters, digits, `-`, `_` and `.` only).
 */
export function timestampName(date = new Date()): string {
  const day = `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`;
  return `${day}-${two(date.getHours())}.${two(date.getMinutes())}.${two(date.getSeconds())}`;
}

/** Why a name cannot be used, or null. */
export function snapshotNameProblem(name: string): string | null {
  if (name === "") return null; // no name: the snapshot is known by its id
  if (name.startsWith("snap_")) return "A name may not start with snap_ (snapshot ids do).";
  if (!NAME.test(name)) return "Use 1–63 of a–z, 0–9, -, _ and ., starting with a letter or digit.";
  return null;
}

/**
 * A primitive's "Snapshots" tab: take one under a name (default the current time, editable),
 * the snapshots newest first, restore one (a plain confirmation: the data becomes the
 * snapshot's). Snapshots are Pro's: on Starter both answer 403 `plan_limit`, said up front.
 */
export function SnapshotsTab(props: { workspace: string; primitive: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const target = { workspace: props.workspace, primitive: props.primitive };
  // The page's own query (cached): the primitive's name for the texts below.
  const primitiveName = useQuery(trpc.primitive.get.queryOptions(target)).data?.name;
  const { plan, role } = useWorkspaceRole(props.workspace);
  const starter = plan === "starter";
  const snapshots = useQuery(trpc.primitive.snapshots.queryOptions(target));
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.primitive.snapshots.queryKey(target) }),
      queryClient.invalidateQueries({ queryKey: trpc.primitive.get.queryKey(target) }),
    ]);
  const ids = { name: useId(), hint: useId() };
  const [name, setName] = useState(() => timestampName());
  const problem = snapshotNameProblem(name);
  const take = useMutation(
    trpc.primitive.snapshot.mutationOptions({
      onSuccess: (info) => {
        toast.success(`Snapshot ${info.name ?? info.id} taken`);
        setName(timestampName());
        void refresh();
      },
      onError: (error) => toast.error(`Could not take the snapshot: ${errorText(error)}`),
    }),
  );
  const restore = useMutation(trpc.primitive.restore.mutationOptions());
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (problem !== null || take.isPending) return;
    take.mutate({ ...target, name: name === "" ? undefined : name });
  }
  async function restoreTo(s: SnapshotInfo) {
    try {
      await restore.mutateAsync({ ...target, snapshot: s.id });
    } catch (error) {
      toast.error(`Could not restore: ${errorText(error)}`);
      throw new Error(errorText(error));
    }
    toast.success(`Restored ${s.name ?? s.id}`);
    // Every view of the primitive's data is stale now.
    await Promise.all([refresh(), queryClient.invalidateQueries()]);
  }
  const list = snapshots.data?.data;
  return (
    <div className="grid gap-6">
      {starter && (
        <div role="note" className="grid gap-1 rounded-md border border-warning/60 bg-warning/10 p-3 text-sm">
          <p className="font-medium">Snapshots are part of Pro</p>
          <p className="text-muted-foreground">
            On the Starter plan, taking or restoring a snapshot is refused with <code>plan_limit</code> (403), through
            the API and here alike; forks too.{" "}
            {(role === "owner" || role === "billing") && (
              <Link href={`/w/${props.workspace}/billing`} className="font-medium text-foreground underline">
                Upgrade to Pro
              </Link>
            )}
          </p>
        </div>
      )}
      <Card>
        <CardHeader>
          <CardTitle className="text-base">Take a snapshot</CardTitle>
          <CardDescription>
            A copy of {primitiveName ?? "this primitive"}’s data as it is now, kept until the primitive is deleted.
            Restore it later, or fork from it.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <form onSubmit={submit} className="flex flex-wrap items-start gap-3">
            <div className="grid min-w-0 flex-1 basis-56 gap-2">
              <Label htmlFor={ids.name}>Snapshot name</Label>
              <Input
                id={ids.name}
                value={name}
                onChange={(e) => setName(e.target.value)}
                autoComplete="off"
                spellCheck={false}
                aria-invalid={problem !== null}
                aria-describedby={ids.hint}
                className={MONO_FIELD}
              />
              <p
                id={ids.hint}
                className={problem === null ? "text-xs text-muted-foreground" : "text-xs text-destructive"}
              >
                {problem ?? "Lower-case letters, digits, -, _ and . (empty: known by its id)."}
              </p>
            </div>
            <SubmitButton
              className="sm:mt-[1.6875rem]"
              disabled={take.isPending || problem !== null || starter}
              aria-busy={take.isPending}
            >
              {take.isPending ? "Taking…" : "Take snapshot"}
            </SubmitButton>
          </form>
          {take.error !== null && errorCode(take.error) === "plan_limit" && (
            <p role="alert" className="mt-2 text-sm text-destructive">
              This workspace’s plan does not include snapshots (plan_limit).
            </p>
          )}
        </CardContent>
      </Card>
      <section aria-labelledby="snapshots-title" className="grid gap-3">
        <h3 id="snapshots-title" className="font-semibold">
          Snapshots <span className="text-sm font-normal text-muted-foreground">(newest first)</span>
        </h3>
        <ListState
          query={snapshots}
          count={list?.length}
          label="snapshots"
          empty={{
            title: "No snapshots yet",
            description: starter ? "Snapshots come with Pro." : "Take one above before a risky change.",
          }}
        />
        {list !== undefined && list.length > 0 && (
          <ul aria-label="Snapshots" className="divide-y rounded-md border">
            {list.map((s) => (
              <li key={s.id} className="flex flex-wrap items-center gap-x-3 gap-y-2 p-3 text-sm">
                <div className="grid min-w-0 flex-1 gap-0.5">
                  <span className="break-all font-mono font-medium">
                    {s.name ?? <Badge variant="secondary">unnamed</Badge>}
                  </span>
                  <span className="text-xs text-muted-foreground">
                    <time dateTime={new Date(s.created_at).toISOString()}>{formatDate(s.created_at)}</time> ·{" "}
                    {formatRelative(s.created_at)}
                    {s.name === null && <span className="break-all font-mono"> · {s.id}</span>}
                  </span>
                </div>
                <ConfirmDialog
                  trigger={
                    <Button size="sm" variant="outline" aria-label={`Restore ${s.name ?? s.id}`} disabled={starter}>
                      Restore
                    </Button>
                  }
                  title={`Restore ${s.name ?? "this snapshot"}?`}
                  description={`The data of ${primitiveName ?? "this primitive"} becomes exactly the snapshot’s, as of ${formatDate(s.created_at)}: everything written since is replaced. Take a snapshot first to keep today’s data.`}
                  confirmLabel="Restore"
                  onConfirm={() => restoreTo(s)}
                />
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
