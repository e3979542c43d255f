"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/** Connected apps (OAuth): client, user, group, tools, since when; disconnect ends their tokens. */
export function ConnectionsPanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.connections.list.queryOptions({ workspace }));
  const disconnect = useMutation(
    trpc.connections.disconnect.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.connections.list.queryKey({ workspace }) }),
    }),
  );
  return (
    <section aria-labelledby="apps-title" className="rounded-lg border bg-white p-4">
      <h2 id="apps-title" className="text-lg font-semibold">
        Connected apps
      </h2>
      {list.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
      <ErrorText error={list.error} prefix="Could not load connected apps: " />
      {list.data?.length === 0 && <p className="text-sm text-zinc-600">No app is connected.</p>}
      <ul className="mt-2 divide-y text-sm">
        {list.data?.map((c) => (
          <li key={c.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
            <span>
              <span className="font-medium">{c.client_name ?? c.client_id}</span>{" "}
              <span className="text-zinc-600">
                group {c.group} · {c.tools.join(", ")} · since {new Date(c.created_at).toLocaleString()}
              </span>
            </span>
            <button
              type="button"
              className="rounded border px-2 py-1"
              onClick={() => disconnect.mutate({ workspace, id: c.id })}
              aria-label={`Disconnect ${c.client_name ?? c.client_id}`}
            >
              Disconnect
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
