"use client";
import type { QueryResult } from "@prim/wire";
import { Badge } from "@/components/ui/badge";
import { formatNumber } from "@/lib/format";
import { cn } from "@/lib/utils";

/** One statement's answer as the console shows it. */
export interface StatementResult {
  sql: string;
  result: QueryResult;
  /** Result columns declared BLOB in the tables the statement names (their values are base64). */
  blobs: ReadonlySet<string>;
}

/** Bytes of a base64 text. */
function base64Bytes(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

/**
 * A cell by its value's type: numbers right-aligned in tabular figures, NULL muted, text as
 * text (never JSON-quoted), a BLOB column's value marked with its size.
 */
export function Cell({ value, blob }: { value: unknown; blob: boolean }) {
  if (value === null || value === undefined) {
    return <td className="px-2 py-1.5 align-top text-xs italic text-muted-foreground">NULL</td>;
  }
  if (blob && typeof value === "string") {
    return (
      <td className="px-2 py-1.5 align-top" title={`base64: ${value.slice(0, 120)}${value.length > 120 ? "…" : ""}`}>
        <Badge variant="outline">BLOB</Badge>{" "}
        <span className="text-xs text-muted-foreground">{formatNumber(base64Bytes(value))} bytes</span>
      </td>
    );
  }
  if (typeof value === "number" || typeof value === "bigint") {
    return <td className="px-2 py-1.5 text-right align-top font-mono tabular-nums">{String(value)}</td>;
  }
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return (
    <td className="max-w-[40ch] px-2 py-1.5 align-top">
      <span className="line-clamp-6 whitespace-pre-wrap break-words">{text}</span>
    </td>
  );
}

/** The result of one statement: its rows as a table, or what it changed. */
export function ResultView({ item, index, total }: { item: StatementResult; index: number; total: number }) {
  const { result } = item;
  const numeric = new Set(
    result.columns.filter(
      (c) => result.rows.length > 0 && result.rows.every((r) => r[c] === null || typeof r[c] === "number"),
    ),
  );
  const changed =
    result.columns.length === 0 || result.rows_affected > 0 || result.last_insert_rowid !== null
      ? [
          `${formatNumber(result.rows_affected)} ${result.rows_affected === 1 ? "row" : "rows"} affected`,
          ...(result.last_insert_rowid === null ? [] : [`last insert id ${result.last_insert_rowid}`]),
        ]
      : [];
  const caption = total > 1 ? `Statement ${index + 1} of ${total}` : "Result";
  return (
    <figure className="grid min-w-0 gap-2" aria-label={caption}>
      <figcaption className="flex min-w-0 flex-wrap items-baseline gap-x-2 text-xs text-muted-foreground">
        <span className="font-medium text-foreground">{caption}</span>
        <code className="min-w-0 truncate">{item.sql.replace(/\s+/g, " ").slice(0, 120)}</code>
      </figcaption>
      {result.columns.length > 0 && (
        <div className="max-h-[28rem] overflow-auto rounded-md border">
          <table className="w-full text-sm">
            <thead className="sticky top-0 bg-muted">
              <tr>
                {result.columns.map((c) => (
                  <th
                    key={c}
                    scope="col"
                    className={cn(
                      "whitespace-nowrap px-2 py-1.5 font-mono text-xs font-medium",
                      numeric.has(c) ? "text-right" : "text-left",
                    )}
                  >
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y">
              {result.rows.map((row, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: result rows have no identity
                <tr key={i}>
                  {result.columns.map((c) => (
                    <Cell key={c} value={row[c]} blob={item.blobs.has(c)} />
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="text-xs text-muted-foreground">
        {[
          ...(result.columns.length > 0
            ? [`${formatNumber(result.rows.length)} ${result.rows.length === 1 ? "row" : "rows"}`]
            : []),
          ...changed,
          ...(result.truncated ? ["truncated: the answer reached the row or size limit"] : []),
        ].join(" · ")}
      </p>
    </figure>
  );
}
