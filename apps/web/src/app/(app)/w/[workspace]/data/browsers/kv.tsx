"use client";
import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { MoreButton, TextField } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/** A kv primitive's keys: prefix search, values, expiry, paged. */
export function KvBrowser({ workspace, primitive }: { workspace: string; primitive: { id: string; name: string } }) {
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
