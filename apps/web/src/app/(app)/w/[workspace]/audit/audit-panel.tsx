"use client";
import { useInfiniteQuery } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";
import { Skeleton } from "@/components/ui/skeleton";
import { SubmitButton } from "@/components/ui/submit-button";
import { targetAsActor } from "@/lib/audit";
import { useTRPC } from "@/lib/trpc";
import { AuditRow } from "./audit-row";

const FIELDS = ["type", "action", "actor", "group"] as const;
type Filters = Record<(typeof FIELDS)[number], string>;

/** The spec's audit `type` filter: `group` or a primitive type, and the control plane's `workspace`. */
const TYPES = ["workspace", "group", "db", "fs", "queue", "memory", "vault", "kv", "storage"] as const;

/**
 * The audit trail with the spec's filters (type, action prefix, actor glob, group) kept in the
 * address, newest first, 50 at a time; actors by name, failed calls marked with their code.
 */
export function AuditPanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const applied: Filters = { type: "", action: "", actor: "", group: "" };
  for (const field of FIELDS) applied[field] = params.get(field) ?? "";
  const [draft, setDraft] = useState<Filters>(applied);
  const apply = (next: Filters) => {
    setDraft(next);
    const query = new URLSearchParams(Object.entries(next).filter(([, v]) => v.trim() !== ""));
    router.replace(query.size === 0 ? pathname : `${pathname}?${query}`, { scroll: false });
  };
  const audit = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { workspace, ...applied },
      { getNextPageParam: (last) => last.next_cursor ?? undefined, retry: false },
    ),
  );
  const pages = audit.data?.pages ?? [];
  const items = pages.flatMap((p) =>
    p.data.map((entry) => {
      const target = targetAsActor(entry);
      return { entry, actor: p.actors[entry.actor], target: target === null ? undefined : p.actors[target] };
    }),
  );
  const filtered = FIELDS.some((f) => applied[f] !== "");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply(draft);
  };
  return (
    <div className="space-y-4">
      <form
        onSubmit={submit}
        className="grid gap-3 rounded-lg border p-4 sm:grid-cols-2 lg:grid-cols-[repeat(4,minmax(0,1fr))_auto]"
      >
        <div className="space-y-1.5">
          <Label htmlFor="audit-type">Type</Label>
          <NativeSelect id="audit-type" value={draft.type} onChange={(e) => apply({ ...draft, type: e.target.value })}>
            <option value="">All types</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </NativeSelect>
        </div>
        <FilterInput id="action" label="Action" placeholder="kv. or key.*" draft={draft} setDraft={setDraft} />
        <FilterInput
          id="actor"
          label="Actor (e.g. user:*)"
          placeholder="key:key_… or user:*"
          draft={draft}
          setDraft={setDraft}
        />
        <FilterInput id="group" label="Group" placeholder="group name" draft={draft} setDraft={setDraft} />
        <div className="flex items-end gap-2">
          <SubmitButton>Apply</SubmitButton>
          {filtered && (
            <Button variant="ghost" onClick={() => apply({ type: "", action: "", actor: "", group: "" })}>
              Clear
            </Button>
          )}
        </div>
      </form>
      {audit.isPending ? (
        <div className="space-y-2" aria-busy="true">
          <Skeleton className="h-14" />
          <Skeleton className="h-14" />
          <Skeleton className="h-14" />
        </div>
      ) : audit.isError ? (
        <ErrorText error={audit.error} prefix="Could not load the audit log: " />
      ) : items.length === 0 ? (
        <EmptyState
          title={filtered ? "No entries match these filters" : "No entries yet"}
          description={
            filtered
              ? "Action takes an exact name or a prefix ending in . or *; actor an exact actor or a prefix ending in *."
              : "Calls on data and changes to keys, members and the plan appear here."
          }
        />
      ) : (
        <ol aria-label="Audit entries" className="divide-y rounded-lg border">
          {items.map(({ entry, actor, target }) => (
            <AuditRow
              key={entry.id}
              workspace={workspace}
              entry={entry}
              actor={actor}
              target={target}
              onActor={() => apply({ ...draft, actor: entry.actor })}
            />
          ))}
        </ol>
      )}
      {audit.hasNextPage && (
        <Button variant="outline" onClick={() => void audit.fetchNextPage()} disabled={audit.isFetchingNextPage}>
          {audit.isFetchingNextPage ? "Loading…" : "Older entries"}
        </Button>
      )}
    </div>
  );
}

function FilterInput(props: {
  id: "action" | "actor" | "group";
  label: string;
  placeholder: string;
  draft: Filters;
  setDraft: (f: Filters) => void;
}) {
  return (
    <div className="space-y-1.5">
      <Label htmlFor={`audit-${props.id}`}>{props.label}</Label>
      <Input
        id={`audit-${props.id}`}
        value={props.draft[props.id]}
        placeholder={props.placeholder}
        onChange={(e) => props.setDraft({ ...props.draft, [props.id]: e.target.value })}
        className="font-mono"
      />
    </div>
  );
}
