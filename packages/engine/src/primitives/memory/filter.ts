import type Database from "better-sqlite3";

/** Recall's filters, as the request gives them. */
export interface RecallFilter {
  kinds?: string[] | undefined;
  /** A memory must carry every one of these tags. */
  tags?: string[] | undefined;
  owner?: string | undefined;
  includeSuperseded: boolean;
  /** Only memories created in [since, until] (ms, both ends included, as audit filters are). */
  since?: number | undefined;
  until?: number | undefined;
  /**
   * Memories as they were at this time (ms): created by then, not yet forgotten, and — unless
   * `includeSuperseded` — not yet superseded. Without it, memories as they are now.
   */
  asOf?: number | undefined;
}

/** Filters as an SQL condition over `memories m` with its named parameters. */
export interface SqlFilter {
  sql: string;
  params: Record<string, unknown>;
}

/** The request's filters as SQL, applied inside every signal's query (before ranking). */
export function sqlFilter(filter: RecallFilter): SqlFilter {
  const clauses: string[] = [];
  const params: Record<string, unknown> = {};
  if (filter.asOf === undefined) {
    clauses.push("m.forgotten_at IS NULL");
    if (!filter.includeSuperseded) clauses.push("m.superseded_by IS NULL");
  } else {
    params.asOf = filter.asOf;
    // A row is what the memory was from valid_from until forgotten_at (forgotten, or replaced
    // by an update: then a past row); at most one row of a memory passes.
    clauses.push("m.valid_from <= @asOf", "(m.forgotten_at IS NULL OR m.forgotten_at > @asOf)");
    if (!filter.includeSuperseded) clauses.push("(m.superseded_at IS NULL OR m.superseded_at > @asOf)");
  }
  if (filter.since !== undefined) {
    params.since = filter.since;
    clauses.push("m.created_at >= @since");
  }
  if (filter.until !== undefined) {
    params.until = filter.until;
    clauses.push("m.created_at <= @until");
  }
  if (filter.kinds !== undefined && filter.kinds.length > 0) {
    const names = filter.kinds.map((kind, i) => {
      params[`k${i}`] = kind;
      return `@k${i}`;
    });
    clauses.push(`m.kind IN (${names.join(", ")})`);
  }
  if (filter.owner !== undefined) {
    params.owner = filter.owner;
    clauses.push("m.owner = @owner");
  }
  for (const [i, tag] of (filter.tags ?? []).entries()) {
    params[`t${i}`] = tag;
    clauses.push(`EXISTS (SELECT 1 FROM memory_tags t WHERE t.tag = @t${i} AND t.seq = m.seq)`);
  }
  return { sql: clauses.join(" AND "), params };
}

/** Prepared statements by SQL text; filter shapes vary with the number of kinds and tags. */
export class StatementCache {
  private readonly stmts = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let stmt = this.stmts.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      if (this.stmts.size >= 256) this.stmts.clear(); // bounded; rebuilt on demand
      this.stmts.set(sql, stmt);
    }
    return stmt;
  }
}
