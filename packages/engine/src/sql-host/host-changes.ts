import type Database from "better-sqlite3";
import { systemClock } from "../core/clock.js";
import { ChangeLog, DB_CHANGE_TABLE, DEFAULT_CHANGE_RETENTION } from "../sqlite/change-log.js";
import type { QueryResult } from "./protocol.js";
import { leadingTokens } from "./sql-safety.js";

/**
 * A `db` primitive's change log, kept by the SQL host in the user's database itself (tables
 * `_prim_changes`, `_prim_changes_state`) and appended in the transaction of the statements it
 * records: one entry per statement that changed something — `op` its verb (`insert`, `update`,
 * `delete`, `replace`, `create`, `drop`, `alter`), `table` the object it names, `detail.rows`
 * SQLite's `changes()` for it. Row-level entries are not possible: better-sqlite3 exposes no
 * update hook. Main only: a branch's statements are recorded when it is promoted (a new epoch).
 * Statements of the user's that would write to these tables are refused (403).
 */
const logs = new WeakMap<Database.Database, ChangeLog>();

/** The log of main's connection, its tables made on first use. */
export function dbLog(db: Database.Database): ChangeLog {
  let log = logs.get(db);
  if (log === undefined) {
    log = new ChangeLog(db, systemClock, { enabled: true, retention: DEFAULT_CHANGE_RETENTION }, DB_CHANGE_TABLE);
    logs.set(db, log);
  }
  return log;
}

const VERBS = new Set(["INSERT", "REPLACE", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER"]);
/** Words between a verb and the name it acts on. */
const FILLER = new Set([
  "OR",
  "ROLLBACK",
  "ABORT",
  "REPLACE",
  "FAIL",
  "IGNORE",
  "INTO",
  "FROM",
  "TABLE",
  "INDEX",
  "VIEW",
  "TRIGGER",
  "VIRTUAL",
  "TEMP",
  "TEMPORARY",
  "UNIQUE",
  "IF",
  "NOT",
  "EXISTS",
]);

/** The verb of a writing statement (after any `WITH …` list) and the object it names. */
export function statementSubject(sql: string): { op: string; name: string } | null {
  const tokens = leadingTokens(sql, 4096, true);
  let depth = 0;
  let at = -1;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === "(") depth++;
    else if (t === ")") depth--;
    else if (depth === 0 && VERBS.has(t.toUpperCase())) {
      at = i;
      break;
    }
  }
  if (at < 0) return null;
  const op = (tokens[at] as string).toLowerCase();
  let i = at + 1;
  // `REPLACE` after `INSERT OR` is a conflict clause, not the verb.
  while (i < tokens.length && FILLER.has((tokens[i] as string).toUpperCase())) i++;
  let name = tokens[i];
  if (name !== undefined && tokens[i + 1] === ".") name = tokens[i + 2]; // schema-qualified
  return name === undefined ? null : { op, name };
}

/** The engine's own tables in a user's database: the change log's and the outbox (host-outbox.ts). */
const ENGINE_TABLES = new Set(["_PRIM_CHANGES", "_PRIM_CHANGES_STATE", "_PRIM_OUTBOX"]);

/** Whether a statement names the change log's or the outbox's tables (a user's write there is refused). */
export function namesChangeLog(sql: string): boolean {
  const lower = sql.toLowerCase();
  if (!lower.includes(DB_CHANGE_TABLE) && !lower.includes("_prim_outbox")) return false;
  return leadingTokens(sql, 1_000_000).some((t) => ENGINE_TABLES.has(t));
}

/** Records a statement that wrote: DDL always, DML when it changed rows. */
export function recordStatement(log: ChangeLog, sql: string, result: QueryResult): void {
  const subject = statementSubject(sql);
  if (subject === null) return;
  const ddl = subject.op === "create" || subject.op === "drop" || subject.op === "alter";
  if (!ddl && result.rows_affected === 0) return;
  log.append(subject.op, subject.name, ddl ? {} : { extra: { rows: result.rows_affected } });
}
