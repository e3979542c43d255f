"use client";
import type { MemoryRecord, RecalledMemory } from "@prim/wire";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { Input } from "@/components/ui/input";
import { SubmitButton } from "@/components/ui/submit-button";
import { errorText } from "@/lib/errors";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";
import { actKey, useAct } from "./act";
import { AddMemory, SupersedeDialog } from "./memory-forms";
import { MemoryHistory } from "./memory-history";
import { ListState, Pager, useCursorPages } from "./view-states";

type Props = { workspace: string; primitive: string };

/** Memories a page of the list shows. */
const PAGE = 20;

/**
 * A memory primitive: add a memory, recall by a query (best first, with scores), every memory
 * newest first (paged), and for each: supersede (new text replacing it, the old shown), forget, or
 * its history.
 */
export function MemoryBrowser(props: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const act = useAct(props.workspace, props.primitive);
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: actKey(props.primitive) }),
      queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() }),
    ]);
  return (
    <div className="grid gap-6">
      <AddMemory act={act} onDone={refresh} />
      <Recall {...props} act={act} refresh={refresh} />
      <AllMemories {...props} act={act} refresh={refresh} />
    </div>
  );
}

type Section = Props & { act: ReturnType<typeof useAct>; refresh: () => Promise<unknown> };

function Recall(props: Section) {
  const trpc = useTRPC();
  const id = useId();
  const [query, setQuery] = useState("");
  const [asked, setAsked] = useState<string | null>(null);
  const found = useQuery({
    ...trpc.primitive.browse.queryOptions({
      workspace: props.workspace,
      primitive: props.primitive,
      view: "memory.recall",
      args: { query: asked ?? "" },
    }),
    enabled: asked !== null,
    select: (answer: unknown) => (answer as { data: RecalledMemory[] }).data,
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (query.trim() !== "") setAsked(query.trim());
  }
  return (
    <section aria-labelledby={`${id}-title`} className="grid gap-3">
      <h3 id={`${id}-title`} className="font-semibold">
        Recall
      </h3>
      <form onSubmit={submit} className="flex flex-wrap items-center gap-2">
        <label htmlFor={id} className="sr-only">
          Recall query
        </label>
        <Input
          id={id}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder="What does the user prefer?"
          className="min-w-0 flex-1 basis-48"
        />
        <SubmitButton variant="secondary" disabled={asked !== null && found.isFetching}>
          Recall
        </SubmitButton>
      </form>
      {asked !== null && (
        <>
          <ListState
            query={found}
            count={found.data?.length}
            label="recalled memories"
            empty={{ title: "Nothing recalled", description: `No live memory answers “${asked}”.` }}
          />
          {found.data !== undefined && found.data.length > 0 && (
            <ul aria-label="Recalled memories" className="divide-y rounded-md border">
              {found.data.map((m) => (
                <MemoryItem key={m.id} memory={m} score={m.score} act={props.act} refresh={props.refresh} />
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

function AllMemories(props: Section) {
  const id = useId();
  const pages = useCursorPages();
  const list = useQuery({
    queryKey: actKey(props.primitive, "memory.list", pages.cursor ?? null),
    queryFn: () =>
      props.act<{ data: MemoryRecord[]; next_cursor: string | null }>("memory.list", {
        limit: PAGE,
        ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
      }),
  });
  return (
    <section aria-labelledby={id} className="grid gap-3">
      <h3 id={id} className="font-semibold">
        All memories <span className="text-sm font-normal text-muted-foreground">(newest first)</span>
      </h3>
      <ListState
        query={list}
        count={list.data?.data.length}
        label="memories"
        empty={{ title: "No memories yet", description: "Add one above, or let an agent remember through MCP." }}
      />
      {list.data !== undefined && list.data.data.length > 0 && (
        <ul aria-label="Memories" className="divide-y rounded-md border">
          {list.data.data.map((m) => (
            <MemoryItem key={m.id} memory={m} primitive={props.primitive} act={props.act} refresh={props.refresh} />
          ))}
        </ul>
      )}
      <Pager pages={pages} nextCursor={list.data?.next_cursor} label="Memories" />
    </section>
  );
}

function MemoryItem(props: {
  memory: MemoryRecord;
  /** Set in the full list, where each memory offers its history. */
  primitive?: string;
  score?: number;
  act: ReturnType<typeof useAct>;
  refresh: () => Promise<unknown>;
}) {
  const { memory: m } = props;
  const live = m.superseded_by === null;
  const meta = Object.keys(m.metadata).length > 0 ? JSON.stringify(m.metadata) : null;
  async function forget() {
    try {
      await props.act("memory.forget", { id: m.id });
    } catch (error) {
      toast.error(`Could not forget: ${errorText(error)}`);
      throw new Error(errorText(error));
    }
    toast.success("Memory forgotten");
    await props.refresh();
  }
  return (
    <li className="grid gap-2 p-3 text-sm">
      <p className={live ? "whitespace-pre-wrap break-words" : "whitespace-pre-wrap break-words text-muted-foreground"}>
        {m.text}
      </p>
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-muted-foreground">
        <Badge variant="secondary">{m.kind}</Badge>
        {m.tags.map((t) => (
          <Badge key={t} variant="outline">
            {t}
          </Badge>
        ))}
        {!live && <Badge variant="warning">superseded</Badge>}
        {m.supersedes.length > 0 && (
          <span>replaces {m.supersedes.length === 1 ? "a memory" : `${m.supersedes.length}`}</span>
        )}
        {props.score !== undefined && <span>score {props.score.toFixed(2)}</span>}
        <time dateTime={new Date(m.created_at).toISOString()} title={formatDate(m.created_at)}>
          {formatRelative(m.created_at)}
        </time>
        <span className="break-all font-mono">{m.id}</span>
      </div>
      {meta !== null && <p className="break-all font-mono text-xs text-muted-foreground">{meta}</p>}
      <div className="flex flex-wrap gap-2">
        {live && <SupersedeDialog act={props.act} memory={m} onDone={props.refresh} />}
        <ConfirmDialog
          trigger={
            <Button size="sm" variant="outline" aria-label={`Forget: ${m.text.slice(0, 40)}`}>
              Forget
            </Button>
          }
          title="Forget this memory?"
          description={
            <>
              No agent recalls it again; its history keeps it 7 days, then it is deleted for good:{" "}
              <q className="break-words">{m.text.slice(0, 200)}</q>
            </>
          }
          confirmLabel="Forget"
          onConfirm={forget}
        />
      </div>
      {props.primitive !== undefined && <MemoryHistory id={m.id} primitive={props.primitive} act={props.act} />}
    </li>
  );
}
