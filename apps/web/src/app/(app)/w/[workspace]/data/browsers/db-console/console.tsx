"use client";
import type { QueryResult } from "@prim/wire";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type KeyboardEvent, useId, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { SubmitButton } from "@/components/ui/submit-button";
import { Textarea } from "@/components/ui/textarea";
import { errorCode, errorText } from "@/lib/errors";
import { toast } from "@/lib/toast";
import { isAdmin, useAct, useWorkspaceRole } from "../act";
import { useSqlHistory } from "./history";
import { ResultView, type StatementResult } from "./results";
import { blobColumns, SchemaSidebar, schemaKey } from "./schema";
import { splitStatements } from "./split";

/** Most statements in one batch (the engine's MAX_BATCH_STATEMENTS). */
const MAX_BATCH = 100;

/**
 * A db primitive's SQL console: an editor (Ctrl/Cmd+Enter runs it, or the selection), one
 * statement through `db.query` and several through `db.batch` (one transaction: all or none),
 * results as tables with typed cells, the schema beside it (refreshed after every run), and the
 * statements run here kept per primitive in this browser. Members are read-only: their calls
 * are narrowed to `db_query`, so a write is refused by the engine (403 `forbidden`).
 */
export function DbConsole({ workspace, primitive }: { workspace: string; primitive: string }) {
  const queryClient = useQueryClient();
  const act = useAct(workspace, primitive);
  const { role } = useWorkspaceRole(workspace);
  const readOnly = role !== null && !isAdmin(role);
  const history = useSqlHistory(primitive);
  const editor = useRef<HTMLTextAreaElement>(null);
  const ids = { sql: useId(), hint: useId() };
  const [sql, setSql] = useState("");
  const run = useMutation({
    mutationFn: async (text: string) => {
      const statements = splitStatements(text);
      if (statements.length === 0) throw new Error("Nothing to run: the editor holds no statement.");
      if (statements.length > MAX_BATCH) throw new Error(`At most ${MAX_BATCH} statements run at once.`);
      history.add(text.trim());
      const started = performance.now();
      const results =
        statements.length === 1
          ? [await act<QueryResult>("db.query", { sql: statements[0] })]
          : (await act<{ results: QueryResult[] }>("db.batch", { statements: statements.map((s) => ({ sql: s })) }))
              .results;
      const ms = Math.round(performance.now() - started);
      // A statement that changed something may have changed the schema the BLOB marks read.
      if (results.some((r) => r.columns.length === 0)) {
        await queryClient.invalidateQueries({ queryKey: schemaKey(primitive) });
      }
      const items: StatementResult[] = [];
      for (const [i, result] of results.entries()) {
        const s = statements[i] ?? "";
        items.push({
          sql: s,
          result,
          blobs: result.columns.length > 0 ? await blobColumns(queryClient, act, primitive, s) : new Set(),
        });
      }
      return { items, ms, count: statements.length };
    },
    onSuccess: ({ count, ms }) => {
      if (count > 1) toast.success(`${count} statements run in one transaction (${ms} ms)`);
    },
    onError: (error) => toast.error(`The statement failed: ${errorText(error)}`),
    // Whatever ran may have changed tables: the sidebar reads them again.
    onSettled: () => queryClient.invalidateQueries({ queryKey: schemaKey(primitive) }),
  });
  function start() {
    const field = editor.current;
    const selected =
      field !== null && field.selectionStart !== field.selectionEnd
        ? field.value.slice(field.selectionStart, field.selectionEnd)
        : sql;
    if (selected.trim() === "" || run.isPending) return;
    run.mutate(selected);
  }
  function keyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      start();
    }
  }
  function pick(text: string) {
    setSql(text);
    editor.current?.focus();
  }
  const code = errorCode(run.error);
  return (
    <div className="grid gap-6 lg:grid-cols-[16rem_minmax(0,1fr)]">
      <div className="order-2 grid min-w-0 content-start gap-6 lg:order-1">
        <SchemaSidebar act={act} primitive={primitive} onPick={pick} />
        <History entries={history.entries} onPick={pick} onClear={history.clear} />
      </div>
      <div className="order-1 grid min-w-0 content-start gap-4 lg:order-2">
        {readOnly && (
          <p className="rounded-md border bg-muted/50 p-3 text-sm text-muted-foreground">
            Read-only: as a member you run statements that read. Statements that write (INSERT, CREATE, …) are refused;
            an owner or admin runs those.
          </p>
        )}
        <form
          className="grid gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            start();
          }}
        >
          <label htmlFor={ids.sql} className="text-sm font-medium">
            SQL
          </label>
          <Textarea
            id={ids.sql}
            ref={editor}
            value={sql}
            onChange={(e) => setSql(e.target.value)}
            onKeyDown={keyDown}
            rows={8}
            spellCheck={false}
            autoCapitalize="off"
            autoCorrect="off"
            aria-describedby={ids.hint}
            placeholder={"SELECT * FROM sqlite_master;\n-- several statements, separated by ;, run in one transaction"}
            className="min-h-40 font-mono text-[13px] leading-5"
          />
          <div className="flex flex-wrap items-center justify-between gap-2">
            <p id={ids.hint} className="text-xs text-muted-foreground">
              Ctrl+Enter (⌘+Enter) runs the editor, or the selected text. Several statements run as one batch: all or
              none.
            </p>
            <SubmitButton disabled={run.isPending || sql.trim() === ""} aria-busy={run.isPending}>
              {run.isPending ? "Running…" : "Run"}
            </SubmitButton>
          </div>
        </form>
        {run.error !== null && (
          <div role="alert" className="grid gap-1 rounded-md border border-destructive/50 p-3 text-sm">
            <p className="font-medium text-destructive">
              {code === undefined ? "The statement failed" : `The statement failed: ${code}`}
            </p>
            <p className="whitespace-pre-wrap break-words">{run.error.message}</p>
            {code === "forbidden" && readOnly && (
              <p className="text-muted-foreground">Members may only read; ask an owner or admin to run it.</p>
            )}
          </div>
        )}
        {run.data !== undefined && run.error === null && (
          <section aria-label="Results" className="grid min-w-0 gap-4">
            <p className="text-xs text-muted-foreground">
              {run.data.count === 1 ? "1 statement" : `${run.data.count} statements (one transaction)`} in {run.data.ms}{" "}
              ms
            </p>
            {run.data.items.map((item, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: one result per statement, in order
              <ResultView key={i} item={item} index={i} total={run.data.items.length} />
            ))}
          </section>
        )}
      </div>
    </div>
  );
}

/** The statements run on this primitive in this browser, newest first: a click puts one back. */
function History(props: { entries: string[]; onPick: (sql: string) => void; onClear: () => void }) {
  return (
    <section aria-labelledby="db-history-title" className="grid min-w-0 content-start gap-2">
      <div className="flex items-center justify-between gap-2">
        <h3 id="db-history-title" className="text-sm font-semibold">
          History
        </h3>
        {props.entries.length > 0 && (
          <Button size="sm" variant="ghost" onClick={props.onClear}>
            Clear
          </Button>
        )}
      </div>
      {props.entries.length === 0 ? (
        <p className="text-sm text-muted-foreground">Statements you run appear here (kept in this browser).</p>
      ) : (
        <ul aria-label="Statements run" className="grid max-h-72 grid-cols-[minmax(0,1fr)] gap-1 overflow-y-auto">
          {props.entries.map((s) => (
            <li key={s} className="min-w-0">
              <button
                type="button"
                onClick={() => props.onPick(s)}
                title={s}
                className="w-full truncate rounded-md px-2 py-1 text-left font-mono text-xs hover:bg-accent"
              >
                {s.replace(/\s+/g, " ")}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
