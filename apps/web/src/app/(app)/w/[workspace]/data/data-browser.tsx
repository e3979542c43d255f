"use client";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { MoreButton, TextField } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";
import { PrimitivePanel } from "./primitive-panel";
import { FsBrowser, MemoryBrowser, QueueBrowser, StorageBrowser, VaultBrowser } from "./type-browsers";

const TYPES = ["db", "fs", "queue", "memory", "vault", "kv", "storage"] as const;

type Selected = { id: string; name: string; type: string };

/** Groups → primitives (paged) → a kv primitive's keys (prefix search, paged). */
export function DataBrowser({ workspace, admin }: { workspace: string; admin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [group, setGroup] = useState<string | null>(null);
  const [selected, setSelected] = useState<Selected | null>(null);
  const groups = useQuery(trpc.data.groups.queryOptions({ workspace }));
  const createGroup = useMutation(
    trpc.data.createGroup.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.data.groups.queryKey({ workspace }) }),
    }),
  );
  function submitGroup(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    createGroup.mutate({ workspace, name: String(new FormData(event.currentTarget).get("group") ?? "") });
  }
  return (
    <div className="grid gap-4 sm:grid-cols-3">
      <section aria-labelledby="groups-title" className="rounded-lg border bg-white p-4">
        <h2 id="groups-title" className="font-semibold">
          Groups
        </h2>
        {groups.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
        <ErrorText error={groups.error} />
        {groups.data?.length === 0 && <p className="text-sm text-zinc-600">No groups yet.</p>}
        <ul className="mt-2 text-sm">
          {groups.data?.map((g) => (
            <li key={g.id}>
              <button
                type="button"
                className={`w-full rounded px-2 py-1 text-left ${g.name === group ? "bg-zinc-200" : ""}`}
                aria-pressed={g.name === group}
                onClick={() => {
                  setGroup(g.name);
                  setSelected(null);
                }}
              >
                {g.name} <span className="text-zinc-600">({g.primitives})</span>
              </button>
            </li>
          ))}
        </ul>
        {admin && (
          <form onSubmit={submitGroup} className="mt-3 flex gap-2">
            <label className="sr-only" htmlFor="new-group">
              New group name
            </label>
            <input id="new-group" name="group" placeholder="new group" className="w-full rounded border p-1 text-sm" />
            <button type="submit" className="rounded border px-2 text-sm">
              Add
            </button>
          </form>
        )}
        <ErrorText error={createGroup.error} />
      </section>
      <section aria-labelledby="primitives-title" className="rounded-lg border bg-white p-4 sm:col-span-2">
        <h2 id="primitives-title" className="font-semibold">
          {group === null ? "Primitives" : `Primitives in ${group}`}
        </h2>
        {group === null ? (
          <p className="text-sm text-zinc-600">Pick a group.</p>
        ) : (
          <Primitives workspace={workspace} group={group} admin={admin} onSelect={setSelected} />
        )}
      </section>
      {selected !== null && (
        <PrimitivePanel key={selected.id} workspace={workspace} primitive={selected} admin={admin}>
          {selected.type === "kv" && <KvBrowser workspace={workspace} primitive={selected} />}
          {selected.type === "queue" && <QueueBrowser workspace={workspace} primitive={selected.id} />}
          {selected.type === "vault" && <VaultBrowser workspace={workspace} primitive={selected.id} />}
          {selected.type === "memory" && <MemoryBrowser workspace={workspace} primitive={selected.id} />}
          {selected.type === "fs" && <FsBrowser workspace={workspace} primitive={selected.id} />}
          {selected.type === "storage" && <StorageBrowser workspace={workspace} primitive={selected.id} />}
        </PrimitivePanel>
      )}
    </div>
  );
}

function Primitives(props: { workspace: string; group: string; admin: boolean; onSelect: (p: Selected) => void }) {
  const { workspace, group, admin } = props;
  const trpc = useTRPC();
  const queryClient = useQueryClient();
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
  const create = useMutation(trpc.data.createPrimitive.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.data.deletePrimitive.mutationOptions({ onSuccess: refresh }));
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({
      workspace,
      group,
      name: String(form.get("name") ?? ""),
      type: String(form.get("type")) as (typeof TYPES)[number],
    });
  }
  const items = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <div>
      {list.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
      <ErrorText error={list.error} />
      {list.isSuccess && items.length === 0 && <p className="text-sm text-zinc-600">No primitives in this group.</p>}
      <ul className="mt-2 divide-y text-sm">
        {items.map((p) => (
          <li key={p.id} className="flex flex-wrap items-center justify-between gap-2 py-1">
            <span>
              <button
                type="button"
                className="underline"
                onClick={() => props.onSelect({ id: p.id, name: p.name, type: p.type })}
              >
                {p.name}
              </button>{" "}
              <span className="text-zinc-600">{p.type}</span>
            </span>
            {admin && (
              <ConfirmDialog
                trigger={
                  <button type="button" className="rounded border px-2 py-0.5" aria-label={`Delete ${p.name}`}>
                    Delete
                  </button>
                }
                title={`Delete ${p.name}?`}
                description={`The ${p.type} primitive and all its data and snapshots go. This cannot be undone.`}
                word={p.name}
                action="Delete"
                onConfirm={(confirm) => remove.mutate({ workspace, id: p.id, confirm })}
              />
            )}
          </li>
        ))}
      </ul>
      <MoreButton query={list} />
      <ErrorText error={remove.error} />
      <form onSubmit={submit} className="mt-4 flex flex-wrap items-end gap-2 text-sm">
        <label>
          Name
          <input name="name" className="mt-1 block rounded border p-1" />
        </label>
        <label>
          Type
          <select name="type" className="mt-1 block rounded border p-1" defaultValue="kv">
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <button type="submit" className="rounded bg-zinc-900 px-3 py-1 text-white">
          Create
        </button>
        <ErrorText error={create.error} className="w-full" />
      </form>
    </div>
  );
}

function KvBrowser({ workspace, primitive }: { workspace: string; primitive: { id: string; name: string } }) {
  const trpc = useTRPC();
  const [prefix, setPrefix] = useState("");
  const keys = useInfiniteQuery(
    trpc.data.kvList.infiniteQueryOptions(
      { workspace, primitive: primitive.id, prefix },
      { getNextPageParam: (last) => last.next_cursor ?? undefined },
    ),
  );
  const items = keys.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <div className="mt-4">
      <h3 className="font-medium">Keys</h3>
      <TextField label="Prefix" value={prefix} onChange={setPrefix} mono className="mt-2" />
      {keys.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
      <ErrorText error={keys.error} />
      {keys.isSuccess && items.length === 0 && <p className="text-sm text-zinc-600">No keys.</p>}
      <table className="mt-2 w-full table-fixed text-left text-sm">
        <thead>
          <tr>
            <th className="w-1/3">Key</th>
            <th>Value</th>
            <th className="w-1/5">Expires</th>
          </tr>
        </thead>
        <tbody>
          {items.map((k) => (
            <tr key={k.key} className="border-t align-top">
              <td className="break-all font-mono">{k.key}</td>
              <td className="break-all font-mono">{JSON.stringify(k.value)}</td>
              <td>{k.expires_at == null ? "—" : new Date(k.expires_at).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton query={keys} />
    </div>
  );
}
