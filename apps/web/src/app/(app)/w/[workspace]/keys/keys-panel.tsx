"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

const when = (d: Date | null) => (d === null ? "never" : new Date(d).toLocaleString());

/** API keys: the list (start, scope, creator, last use), a new key shown exactly once, revoke. */
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
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.keys.revoke.mutationOptions({ onSuccess: () => void refresh() }));
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const tools = String(form.get("tools") ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    const group = String(form.get("group") ?? "").trim();
    create.mutate({
      workspace,
      name: String(form.get("name") ?? "") || undefined,
      group: group === "" ? undefined : group,
      tools: tools.length === 0 ? undefined : tools,
    });
  }
  return (
    <section aria-labelledby="keys-title" className="rounded-lg border bg-white p-4">
      <h2 id="keys-title" className="text-lg font-semibold">
        API keys
      </h2>
      {keys.isPending && <p className="text-sm text-zinc-600">Loading keys…</p>}
      <ErrorText error={keys.error} prefix="Could not load keys: " />
      {keys.data?.length === 0 && <p className="text-sm text-zinc-600">No keys yet.</p>}
      {keys.data !== undefined && keys.data.length > 0 && (
        <ul className="mt-2 divide-y text-sm">
          {keys.data.map((k) => (
            <li key={k.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
              <span>
                <span className="font-mono">{k.start}…</span> {k.name ?? ""}{" "}
                <span className="text-zinc-600">
                  {k.group ?? "every group"} · {k.tools === null ? "every tool" : k.tools.join(", ")} · by{" "}
                  {k.created_by ?? "?"} · last used {when(k.last_used_at)}
                </span>
              </span>
              {k.revoked_at !== null ? (
                <span className="text-zinc-500">revoked</span>
              ) : (
                canManage && (
                  <button
                    type="button"
                    className="rounded border px-2 py-1"
                    onClick={() => revoke.mutate({ workspace, id: k.id })}
                    aria-label={`Revoke key ${k.start}`}
                  >
                    Revoke
                  </button>
                )
              )}
            </li>
          ))}
        </ul>
      )}
      {shown !== null && (
        <div role="status" className="mt-3 rounded border border-amber-300 bg-amber-50 p-3 text-sm">
          <p>This key is shown once. Copy it now.</p>
          <code className="block break-all font-mono" data-testid="new-key">
            {shown}
          </code>
          <button
            type="button"
            className="mt-2 rounded border px-2 py-1"
            onClick={() => void navigator.clipboard?.writeText(shown)}
          >
            Copy
          </button>
        </div>
      )}
      {canManage && (
        <form onSubmit={submit} className="mt-4 grid gap-2 sm:grid-cols-4">
          <label className="text-sm">
            Name
            <input name="name" className="mt-1 w-full rounded border p-1" />
          </label>
          <label className="text-sm">
            Group (empty: every group)
            <input name="group" className="mt-1 w-full rounded border p-1" />
          </label>
          <label className="text-sm">
            Tools (comma-separated, e.g. kv_*, db_query; empty: every tool)
            <input name="tools" className="mt-1 w-full rounded border p-1" />
          </label>
          <div className="flex items-end">
            <button type="submit" disabled={create.isPending} className="rounded bg-zinc-900 px-3 py-1.5 text-white">
              Create key
            </button>
          </div>
          <ErrorText error={create.error} className="sm:col-span-4" />
        </form>
      )}
    </section>
  );
}
