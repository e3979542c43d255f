"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useState } from "react";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/**
 * One primitive: its state, pause/resume (admins), snapshots (take, list, restore), the SQL
 * console for db primitives (read-only for members), and the type's browser below.
 */
export function PrimitivePanel(props: {
  workspace: string;
  primitive: { id: string; name: string; type: string };
  admin: boolean;
  children?: ReactNode;
}) {
  const { workspace, primitive, admin } = props;
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const target = { workspace, primitive: primitive.id };
  const info = useQuery(trpc.primitive.get.queryOptions(target));
  const snapshots = useQuery(trpc.primitive.snapshots.queryOptions(target));
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.get.queryKey(target) });
    void queryClient.invalidateQueries({ queryKey: trpc.primitive.snapshots.queryKey(target) });
  };
  const pause = useMutation(trpc.primitive.pause.mutationOptions({ onSuccess: refresh }));
  const snapshot = useMutation(trpc.primitive.snapshot.mutationOptions({ onSuccess: refresh }));
  const restore = useMutation(trpc.primitive.restore.mutationOptions({ onSuccess: refresh }));
  const listsChanged = () => void queryClient.invalidateQueries({ queryKey: trpc.data.primitives.pathKey() });
  const update = useMutation(trpc.primitive.update.mutationOptions({ onSuccess: listsChanged }));
  const fork = useMutation(trpc.primitive.fork.mutationOptions({ onSuccess: listsChanged }));
  const failed = pause.error ?? snapshot.error ?? restore.error ?? update.error ?? fork.error;
  function submitFork(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    fork.mutate({ ...target, name: String(new FormData(event.currentTarget).get("fork") ?? "") });
  }
  function submitUpdate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = String(form.get("rename") ?? "").trim();
    const group = String(form.get("move") ?? "").trim();
    update.mutate({ ...target, name: name || undefined, group: group || undefined });
  }
  const paused = (info.data as { paused?: boolean } | undefined)?.paused === true;
  return (
    <section aria-labelledby="primitive-title" className="rounded-lg border bg-white p-4 sm:col-span-3">
      <h2 id="primitive-title" className="font-semibold">
        {primitive.name} <span className="font-normal text-zinc-600">({primitive.type})</span>
        {paused && <span className="ml-2 rounded bg-amber-100 px-1 text-sm">paused</span>}
      </h2>
      <div className="mt-2 flex flex-wrap gap-2 text-sm">
        {admin && (
          <button
            type="button"
            className="rounded border px-2 py-1"
            onClick={() => pause.mutate({ ...target, paused: !paused })}
          >
            {paused ? "Resume" : "Pause"}
          </button>
        )}
        <button type="button" className="rounded border px-2 py-1" onClick={() => snapshot.mutate(target)}>
          Take snapshot
        </button>
      </div>
      <div className="mt-3 flex flex-wrap gap-4 text-sm">
        <form onSubmit={submitFork} className="flex items-end gap-2">
          <label>
            Fork as
            <input name="fork" className="mt-1 block w-36 rounded border p-1" />
          </label>
          <button type="submit" className="rounded border px-2 py-1">
            Fork
          </button>
        </form>
        {admin && (
          <form onSubmit={submitUpdate} className="flex flex-wrap items-end gap-2">
            <label>
              Rename to
              <input name="rename" className="mt-1 block w-36 rounded border p-1" />
            </label>
            <label>
              Move to group
              <input name="move" className="mt-1 block w-36 rounded border p-1" />
            </label>
            <button type="submit" className="rounded border px-2 py-1">
              Apply
            </button>
          </form>
        )}
      </div>
      {(fork.isSuccess || update.isSuccess) && (
        <p role="status" className="mt-2 text-sm">
          {fork.isSuccess ? `Forked as ${fork.data.name}.` : `Now ${update.data?.name} in ${update.data?.group}.`}
        </p>
      )}
      {failed && (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {failed.message}
        </p>
      )}
      <h3 className="mt-3 font-medium">Snapshots</h3>
      {snapshots.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
      {snapshots.data?.data.length === 0 && <p className="text-sm text-zinc-600">No snapshots.</p>}
      <ul className="text-sm">
        {snapshots.data?.data.map((s) => (
          <li key={s.id} className="flex items-center justify-between gap-2 py-1">
            <span className="min-w-0 break-all">
              {s.name ?? s.id} <span className="text-zinc-600">{new Date(s.created_at).toLocaleString()}</span>
            </span>
            <button
              type="button"
              className="rounded border px-2 py-0.5"
              aria-label={`Restore ${s.name ?? s.id}`}
              onClick={() => restore.mutate({ ...target, snapshot: s.id })}
            >
              Restore
            </button>
          </li>
        ))}
      </ul>
      {primitive.type === "db" && <DbConsole workspace={workspace} primitive={primitive.id} />}
      {props.children}
    </section>
  );
}

function DbConsole({ workspace, primitive }: { workspace: string; primitive: string }) {
  const trpc = useTRPC();
  const [sql, setSql] = useState("SELECT name FROM sqlite_master WHERE type = 'table'");
  const run = useMutation(trpc.primitive.dbQuery.mutationOptions());
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    run.mutate({ workspace, primitive, sql });
  }
  return (
    <div className="mt-4">
      <form onSubmit={submit}>
        <label htmlFor="sql" className="font-medium">
          SQL
        </label>
        <textarea
          id="sql"
          value={sql}
          onChange={(e) => setSql(e.target.value)}
          rows={3}
          className="mt-1 block w-full rounded border p-2 font-mono text-sm"
        />
        <button type="submit" className="mt-2 rounded bg-zinc-900 px-3 py-1 text-sm text-white">
          Run
        </button>
      </form>
      <ErrorText error={run.error} className="mt-2" />
      {run.data !== undefined && (
        <div className="mt-2 overflow-x-auto">
          <table className="w-full text-left font-mono text-sm">
            <thead>
              <tr>
                {run.data.columns.map((c) => (
                  <th key={c} className="border-b pr-4">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {run.data.rows.map((row, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: result rows have no identity
                <tr key={i}>
                  {run.data.columns.map((c) => (
                    <td key={c} className="border-b pr-4">
                      {JSON.stringify(row[c])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <p className="text-xs text-zinc-600">
            {run.data.rows.length} rows{run.data.truncated ? " (truncated)" : ""}
            {run.data.rows_affected > 0 ? ` · ${run.data.rows_affected} changed` : ""}
          </p>
        </div>
      )}
    </div>
  );
}
