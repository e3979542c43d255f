"use client";
import type { MemoryVersion } from "@prim/wire";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { formatDate, formatRelative } from "@/lib/format";
import { actKey, type useAct } from "./act";
import { ListState } from "./view-states";

/** Versions a memory's history shows (its newest). */
const VERSIONS = 20;

/**
 * A memory's history on demand: each change newest first (create, update, supersede, forget),
 * with its time and the text it left.
 */
export function MemoryHistory(props: { id: string; primitive: string; act: ReturnType<typeof useAct> }) {
  const listId = useId();
  const [open, setOpen] = useState(false);
  const history = useQuery({
    queryKey: actKey(props.primitive, "memory.history", props.id),
    queryFn: () =>
      props.act<{ data: MemoryVersion[]; next_cursor: string | null }>("memory.history", {
        id: props.id,
        limit: VERSIONS,
      }),
    enabled: open,
  });
  return (
    <div className="grid gap-2">
      <div>
        <Button size="sm" variant="ghost" aria-expanded={open} aria-controls={listId} onClick={() => setOpen(!open)}>
          {open ? "Hide history" : "History"}
        </Button>
      </div>
      {open && (
        <div id={listId} className="grid gap-2">
          <ListState
            query={history}
            count={history.data?.data.length}
            label="versions"
            empty={{ title: "No history" }}
          />
          {history.data !== undefined && history.data.data.length > 0 && (
            <ol aria-label="Versions" className="grid gap-1 border-l pl-3 text-xs">
              {history.data.data.map((v) => (
                <li key={v.version} className="grid gap-0.5">
                  <div className="flex flex-wrap items-center gap-2 text-muted-foreground">
                    <span>v{v.version}</span>
                    <Badge variant={v.op === "forget" ? "warning" : "outline"}>{v.op}</Badge>
                    <time dateTime={new Date(v.at).toISOString()} title={formatDate(v.at)}>
                      {formatRelative(v.at)}
                    </time>
                  </div>
                  <p className="whitespace-pre-wrap break-words">{v.text}</p>
                </li>
              ))}
            </ol>
          )}
          {history.data?.next_cursor != null && (
            <p className="text-xs text-muted-foreground">Older versions: through the API or MCP.</p>
          )}
        </div>
      )}
    </div>
  );
}
