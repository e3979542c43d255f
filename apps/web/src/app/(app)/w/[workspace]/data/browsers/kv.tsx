"use client";
import { useInfiniteQuery } from "@tanstack/react-query";
import { PencilIcon, PlusIcon, Trash2Icon } from "lucide-react";
import { useDeferredValue, useId, useState } from "react";
import { MoreButton } from "@/components/fields";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import { formatBytes, formatDate, formatNumber, formatRelative } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { useAct, useUrlState } from "./edit-kit";
import { jsonBytes, pretty } from "./json-text";
import { KvEditor, type KvEntry } from "./kv-editor";

/**
 * A kv primitive's keys by prefix, paged on the server (50 a page, "Load more"), so that a
 * store of 100,000 keys opens as fast as one of ten; add, edit (JSON, TTL) and delete.
 */
export function KvBrowser({ workspace, primitive }: { workspace: string; primitive: { id: string; name: string } }) {
  const trpc = useTRPC();
  const [prefix, setPrefix] = useUrlState("prefix", "");
  const search = useDeferredValue(prefix);
  const prefixId = useId();
  const act = useAct({ workspace, primitive: primitive.id });
  const [editing, setEditing] = useState<KvEntry | null>(null);
  const [editorOpen, setEditorOpen] = useState(false);
  const keys = useInfiniteQuery(
    trpc.data.kvList.infiniteQueryOptions(
      { workspace, primitive: primitive.id, prefix: search },
      { getNextPageParam: (last) => last.next_cursor ?? undefined },
    ),
  );
  const items = (keys.data?.pages.flatMap((p) => p.data) ?? []) as KvEntry[];
  function open(entry: KvEntry | null) {
    setEditing(entry);
    setEditorOpen(true);
  }
  async function remove(entry: KvEntry) {
    await act.run("kv.delete", { key: entry.key }, `Deleted ${entry.key}`);
    if (editing?.key === entry.key) {
      setEditing(null);
      setEditorOpen(false);
    }
  }
  return (
    <section aria-label={`Keys of ${primitive.name}`} className="space-y-4">
      <div className="flex flex-wrap items-end gap-3">
        <div className="grid min-w-0 flex-1 basis-56 gap-2">
          <Label htmlFor={prefixId}>Prefix</Label>
          <Input
            id={prefixId}
            type="search"
            value={prefix}
            onChange={(e) => setPrefix(e.target.value)}
            placeholder="user:"
            spellCheck={false}
            autoComplete="off"
            className="font-mono"
          />
        </div>
        <Button onClick={() => open(null)}>
          <PlusIcon aria-hidden /> Add key
        </Button>
      </div>
      {keys.isPending && (
        <div className="space-y-2" aria-busy="true">
          <Skeleton className="h-14" />
          <Skeleton className="h-14" />
          <Skeleton className="h-14" />
        </div>
      )}
      <ErrorText error={keys.error} />
      {keys.isSuccess && items.length === 0 && (
        <EmptyState
          title={search === "" ? "No keys yet" : `No keys start with “${search}”`}
          description="Add one here, or with PUT /v1/primitives/<id>/keys/<key> from the API."
          action={
            <Button variant="outline" onClick={() => open(null)}>
              Add key
            </Button>
          }
        />
      )}
      {items.length > 0 && (
        <ul className="divide-y rounded-lg border" aria-label="Keys">
          {items.map((entry) => (
            <KvRow key={entry.key} entry={entry} onEdit={() => open(entry)} onDelete={() => remove(entry)} />
          ))}
        </ul>
      )}
      {keys.isSuccess && items.length > 0 && (
        <div className="flex flex-wrap items-center justify-between gap-2 text-sm text-muted-foreground">
          <span>
            {formatNumber(items.length)} {items.length === 1 ? "key" : "keys"} shown
            {keys.hasNextPage ? " (more on the server)" : ""}
          </span>
          <MoreButton query={keys} />
        </div>
      )}
      <KvEditor
        act={act}
        entry={editing}
        prefix={search}
        open={editorOpen}
        onOpenChange={(next) => {
          setEditorOpen(next);
          if (!next) setEditing(null);
        }}
      />
    </section>
  );
}

function KvRow(props: { entry: KvEntry; onEdit: () => void; onDelete: () => Promise<void> }) {
  const { entry } = props;
  const binary = entry.encoding === "bytes";
  const size = binary ? Math.floor((String(entry.value ?? "").length * 3) / 4) : jsonBytes(entry.value);
  return (
    <li className="grid gap-2 p-3 sm:grid-cols-[minmax(0,16rem)_minmax(0,1fr)_auto] sm:gap-4">
      <div className="min-w-0">
        <p className="font-mono text-sm font-medium break-all">{entry.key}</p>
        <p className="mt-1 flex flex-wrap gap-x-3 gap-y-1 text-xs text-muted-foreground">
          <span>{formatBytes(size)}</span>
          {entry.version !== undefined && <span>v{entry.version}</span>}
          {entry.expires_at == null ? (
            <span>no expiry</span>
          ) : (
            <span title={formatDate(entry.expires_at)}>expires {formatRelative(entry.expires_at)}</span>
          )}
        </p>
      </div>
      {binary ? (
        <p className="text-sm text-muted-foreground">
          <Badge variant="outline">bytes</Badge> binary value ({formatBytes(size)})
        </p>
      ) : (
        <pre className="max-h-24 min-w-0 overflow-hidden rounded-md bg-muted px-2 py-1 font-mono text-xs leading-5 break-all whitespace-pre-wrap">
          {preview(entry.value)}
        </pre>
      )}
      <div className="flex items-start gap-1">
        <Button
          variant="outline"
          size="sm"
          onClick={props.onEdit}
          disabled={binary}
          aria-label={`Edit ${entry.key}`}
          title={binary ? "A binary value: change it through the API" : undefined}
        >
          <PencilIcon aria-hidden /> Edit
        </Button>
        <ConfirmDialog
          trigger={
            <Button variant="ghost" size="sm" aria-label={`Delete ${entry.key}`}>
              <Trash2Icon aria-hidden />
            </Button>
          }
          title={`Delete ${entry.key}?`}
          description="The key and its value are removed. This cannot be undone (a snapshot can restore the whole store)."
          confirmLabel="Delete"
          onConfirm={props.onDelete}
        />
      </div>
    </li>
  );
}

/** A value's first lines, pretty (long values are cut; the editor shows all). */
function preview(value: unknown): string {
  const text = pretty(value);
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}
