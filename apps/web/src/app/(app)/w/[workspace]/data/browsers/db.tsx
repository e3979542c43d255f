"use client";
import type { QueryResult } from "@prim/wire";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { actKey, useAct } from "./act";
import { DbConsole } from "./db-console/console";
import { ResultView } from "./db-console/results";
import { blobColumns, quoteIdent, tablesQuery } from "./db-console/schema";
import { ListState } from "./view-states";

export { DbConsole };

/** Rows a table's preview shows. */
const PREVIEW_ROWS = 50;

/**
 * A db primitive's "Browse" tab: its tables and views; one picked shows its first rows (the SQL
 * tab's console does everything else).
 */
export function DbBrowser({ workspace, primitive }: { workspace: string; primitive: string }) {
  const act = useAct(workspace, primitive);
  const queryClient = useQueryClient();
  const tables = useQuery(tablesQuery(act, primitive));
  const [picked, setPicked] = useState<string | null>(null);
  const rows = useQuery({
    queryKey: actKey(primitive, "db", "preview", picked),
    enabled: picked !== null,
    queryFn: async () => {
      const sql = `SELECT * FROM ${quoteIdent(picked ?? "")} LIMIT ${PREVIEW_ROWS}`;
      const result = await act<QueryResult>("db.query", { sql });
      return { sql, result, blobs: await blobColumns(queryClient, act, primitive, sql) };
    },
  });
  const list = tables.data;
  return (
    <div className="grid gap-4">
      <section aria-labelledby="db-tables-title" className="grid gap-2">
        <h3 id="db-tables-title" className="font-semibold">
          Tables and views
        </h3>
        <ListState
          query={tables}
          count={list?.length}
          label="tables"
          empty={{ title: "No tables yet", description: "Create one in the SQL tab." }}
        />
        {list !== undefined && list.length > 0 && (
          <ul aria-label="Tables" className="flex flex-wrap gap-2">
            {list.map((t) => (
              <li key={t.name}>
                <Button
                  size="sm"
                  variant={t.name === picked ? "default" : "outline"}
                  aria-pressed={t.name === picked}
                  onClick={() => setPicked(t.name)}
                  className="font-mono"
                >
                  {t.name}
                  {t.type === "view" ? " (view)" : ""}
                </Button>
              </li>
            ))}
          </ul>
        )}
      </section>
      {picked !== null && (
        <section aria-label={`Rows of ${picked}`} className="grid gap-2">
          <ListState query={rows} count={undefined} label={`the rows of ${picked}`} empty={{ title: "" }} />
          {rows.data !== undefined && <ResultView item={rows.data} index={0} total={1} />}
        </section>
      )}
    </div>
  );
}
