"use client";
import type { TableDetail, TableSummary } from "@prim/wire";
import { type QueryClient, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Skeleton } from "@/components/ui/skeleton";
import { errorText } from "@/lib/errors";
import { actKey, type useAct } from "../act";

type Act = ReturnType<typeof useAct>;

/** Tables listed with their columns open at once up to this many; beyond, a table opens on click. */
const OPEN_AT_ONCE = 12;

export const tablesKey = (primitive: string) => actKey(primitive, "db", "tables");
export const tableKey = (primitive: string, table: string) => actKey(primitive, "db", "table", table);
/** Everything the schema shows (invalidated after a statement that may have changed it). */
export const schemaKey = (primitive: string) => actKey(primitive, "db");

export function tablesQuery(act: Act, primitive: string) {
  return {
    queryKey: tablesKey(primitive),
    queryFn: () => act<{ data: TableSummary[] }>("db.tables").then((r) => r.data),
  };
}

export function tableQuery(act: Act, primitive: string, table: string) {
  return {
    queryKey: tableKey(primitive, table),
    queryFn: () => act<TableDetail>("db.table", { table }),
    staleTime: 60_000,
  };
}

/**
 * The columns declared BLOB in the tables a statement names (BLOBs come back as base64 text, so
 * the declared type is what tells them): `{ column → true }`, from the schema's cache or fetched.
 */
export async function blobColumns(
  queryClient: QueryClient,
  act: Act,
  primitive: string,
  sql: string,
): Promise<Set<string>> {
  const found = new Set<string>();
  try {
    const tables = await queryClient.fetchQuery({ ...tablesQuery(act, primitive), staleTime: 60_000 });
    const named = tables.filter((t) =>
      new RegExp(`(^|[^A-Za-z0-9_$])${escapeRegExp(t.name)}($|[^A-Za-z0-9_$])`, "i").test(sql),
    );
    for (const t of named.slice(0, 8)) {
      const detail = await queryClient.fetchQuery(tableQuery(act, primitive, t.name));
      for (const c of detail.columns) if (/BLOB/i.test(c.type)) found.add(c.name);
    }
  } catch {
    // no schema, no marks: the cells show as text
  }
  return found;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The database's tables and views with their columns; a click on a name puts it in the editor. */
export function SchemaSidebar(props: { act: Act; primitive: string; onPick: (text: string) => void }) {
  const tables = useQuery(tablesQuery(props.act, props.primitive));
  const list = tables.data;
  return (
    <section aria-labelledby="db-schema-title" className="grid min-w-0 content-start gap-2">
      <div className="flex items-center justify-between gap-2">
        <h3 id="db-schema-title" className="text-sm font-semibold">
          Schema
        </h3>
        <Button size="sm" variant="ghost" onClick={() => void tables.refetch()} disabled={tables.isFetching}>
          {tables.isFetching ? "Refreshing…" : "Refresh"}
        </Button>
      </div>
      {tables.isPending && (
        <div role="status" aria-label="Loading the schema" className="grid gap-1">
          <Skeleton className="h-5" />
          <Skeleton className="h-5 w-3/4" />
        </div>
      )}
      {tables.error !== null && (
        <p role="alert" className="break-words text-sm text-destructive">
          {errorText(tables.error)}
        </p>
      )}
      {list?.length === 0 && (
        <p className="text-sm text-muted-foreground">No tables yet: a CREATE TABLE in the editor makes one.</p>
      )}
      {list !== undefined && list.length > 0 && (
        <ul aria-label="Tables and views" className="grid grid-cols-[minmax(0,1fr)] gap-1 text-sm">
          {list.map((t) => (
            <SchemaTable
              key={t.name}
              act={props.act}
              primitive={props.primitive}
              table={t}
              open={list.length <= OPEN_AT_ONCE}
              onPick={props.onPick}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function SchemaTable(props: {
  act: Act;
  primitive: string;
  table: TableSummary;
  open: boolean;
  onPick: (t: string) => void;
}) {
  const [open, setOpen] = useState(props.open);
  const detail = useQuery({ ...tableQuery(props.act, props.primitive, props.table.name), enabled: open });
  const name = props.table.name;
  return (
    <li className="min-w-0">
      <div className="flex items-center gap-1">
        <button
          type="button"
          aria-expanded={open}
          aria-label={`${open ? "Hide" : "Show"} the columns of ${name}`}
          onClick={() => setOpen(!open)}
          className="w-4 shrink-0 text-muted-foreground"
        >
          {open ? "▾" : "▸"}
        </button>
        <button
          type="button"
          onClick={() => props.onPick(`SELECT * FROM ${quoteIdent(name)} LIMIT 100`)}
          title={`SELECT * FROM ${name}`}
          className="min-w-0 truncate text-left font-mono font-medium hover:underline"
        >
          {name}
        </button>
        {props.table.type === "view" && <Badge variant="outline">view</Badge>}
      </div>
      {open && (
        <ul aria-label={`Columns of ${name}`} className="ml-5 grid gap-0.5 border-l pl-2 text-xs">
          {detail.isPending && <li className="text-muted-foreground">Loading…</li>}
          {detail.error !== null && <li className="text-destructive">{errorText(detail.error)}</li>}
          {detail.data?.columns.map((c) => (
            <li key={c.name} className="flex min-w-0 items-baseline gap-1.5">
              <span className="truncate font-mono">{c.name}</span>
              <span className="shrink-0 text-muted-foreground">{c.type === "" ? "any" : c.type.toLowerCase()}</span>
              {c.pk > 0 && <span className="shrink-0 font-medium text-muted-foreground">pk</span>}
              {c.notnull && <span className="shrink-0 text-muted-foreground">not null</span>}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** An identifier as SQL text: bare when it can be, else double-quoted. */
export function quoteIdent(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}
