import { ResponseBudget } from "../../core/response-budget.js";
import type { StatementCache } from "./filter.js";
import { answerBytes, type MemoryRow, ROW_COLUMNS } from "./record.js";

export interface ListFilter {
  kind?: string | undefined;
  tag?: string | undefined;
  owner?: string | undefined;
}

/**
 * Memories newest first (not forgotten; superseded ones included), after `beforeSeq`;
 * `limit + 1` rows at most (for the cursor), stopping where the next would not fit `budget`.
 */
export function listMemories(
  stmts: StatementCache,
  filter: ListFilter,
  beforeSeq: number,
  limit: number,
  budget = new ResponseBudget(),
): MemoryRow[] {
  const where = ["m.seq < @before", "m.forgotten_at IS NULL"];
  if (filter.kind !== undefined) where.push("m.kind = @kind");
  if (filter.owner !== undefined) where.push("m.owner = @owner");
  if (filter.tag !== undefined) where.push("m.seq IN (SELECT seq FROM memory_tags WHERE tag = @tag)");
  const sql = `SELECT ${ROW_COLUMNS.replace(/(\w+)/g, "m.$1")} FROM memories m
    WHERE ${where.join(" AND ")} ORDER BY m.seq DESC LIMIT @limit`;
  const params: Record<string, unknown> = { before: beforeSeq, limit: limit + 1 };
  for (const key of ["kind", "owner", "tag"] as const) if (filter[key] !== undefined) params[key] = filter[key];
  const out: MemoryRow[] = [];
  for (const row of stmts.get(sql).iterate(params) as IterableIterator<MemoryRow>) {
    if (!budget.take(answerBytes(row))) break;
    out.push(row);
  }
  return out;
}
