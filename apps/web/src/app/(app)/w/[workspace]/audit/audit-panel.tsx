"use client";
import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { MoreButton } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/** The audit trail with the spec's filters (admins; Pro and up), paged. */
export function AuditPanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const [filters, setFilters] = useState({ type: "", action: "", actor: "", group: "" });
  const audit = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { workspace, ...filters },
      { getNextPageParam: (last) => last.next_cursor ?? undefined, retry: false },
    ),
  );
  const items = audit.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <section aria-labelledby="audit-title" className="rounded-lg border bg-white p-4">
      <h2 id="audit-title" className="text-lg font-semibold">
        Audit log
      </h2>
      <div className="mt-2 grid gap-2 text-sm sm:grid-cols-4">
        {(["type", "action", "actor", "group"] as const).map((field) => (
          <label key={field}>
            {field === "type"
              ? "Type (workspace, group, kv, …)"
              : field === "action"
                ? "Action (prefix ending in . or *)"
                : field === "actor"
                  ? "Actor (e.g. user:*)"
                  : "Group"}
            <input
              value={filters[field]}
              onChange={(e) => setFilters({ ...filters, [field]: e.target.value })}
              className="mt-1 block w-full rounded border p-1"
            />
          </label>
        ))}
      </div>
      {audit.isPending && <p className="text-sm text-zinc-600">Loading…</p>}
      <ErrorText error={audit.error} className="mt-2" />
      {audit.isSuccess && items.length === 0 && <p className="text-sm text-zinc-600">No entries.</p>}
      <ul className="mt-2 divide-y text-sm">
        {items.map((e) => (
          <li key={e.id} className="py-1">
            <span className="font-mono">{new Date(e.ts).toISOString().replace("T", " ").slice(0, 19)}</span>{" "}
            <span className="font-medium">{e.action}</span>{" "}
            {e.primitive === "workspace" ? e.target : `${e.group}/${e.instance ?? e.primitive}`}{" "}
            <span className="text-zinc-600">by {e.actor}</span>
          </li>
        ))}
      </ul>
      <MoreButton query={audit} />
    </section>
  );
}
