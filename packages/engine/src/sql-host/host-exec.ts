import type Database from "better-sqlite3";
import { setRecent } from "../core/recent.js";
import { namesChangeLog } from "./host-changes.js";
import { MAX_RESULT_BYTES, MAX_RESULT_ROWS, type QueryResult, type Statement } from "./protocol.js";
import { leadingTokens } from "./sql-safety.js";

/** An error the host reports with a spec code (mapped to a ServiceError by the engine). */
export interface ExecError {
  code: string;
  message: string;
}

/** JSON-safe values: integers beyond 2^53 as strings, BLOBs as base64. */
function outValue(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (Buffer.isBuffer(value)) return value.toString("base64");
  return value;
}

/** Parameters as SQLite binds them: booleans as 0/1, `{ base64 }` as a BLOB. */
function inValue(value: unknown, where: string): unknown {
  if (value === null || typeof value === "string" || typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "object" && value !== null && typeof (value as { base64?: unknown }).base64 === "string") {
    return Buffer.from((value as { base64: string }).base64, "base64");
  }
  throw {
    code: "invalid_request",
    message: `${where}: parameters must be strings, numbers, booleans, null or { base64 }`,
  };
}

export function bindings(params: unknown, where: string): unknown[] {
  if (params === undefined || params === null) return [];
  if (Array.isArray(params)) return [params.map((v, i) => inValue(v, `${where}[${i}]`))];
  if (typeof params === "object") {
    // `:name`, `@name` and `$name` all bind the key `name`.
    const named: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(params)) named[k.replace(/^[:@$]/, "")] = inValue(v, `${where}.${k}`);
    return [named];
  }
  throw { code: "invalid_request", message: `${where}: params must be an array or an object` };
}

/** A statement's rows as JSON-safe objects, cut at the row cap and at `maxBytes`. */
export function collectRows(
  source: Iterable<Record<string, unknown>>,
  maxBytes = MAX_RESULT_BYTES,
): {
  rows: Record<string, unknown>[];
  truncated: boolean;
  /** Roughly the bytes of the rows as JSON. */
  bytes: number;
} {
  const rows: Record<string, unknown>[] = [];
  let bytes = 0;
  for (const raw of source) {
    if (rows.length >= MAX_RESULT_ROWS || bytes >= maxBytes) return { rows, truncated: true, bytes };
    const row: Record<string, unknown> = {};
    for (const k in raw) {
      const out = outValue(raw[k]);
      row[k] = out;
      bytes += typeof out === "string" ? Buffer.byteLength(out) + 8 : 16;
    }
    rows.push(row);
  }
  return { rows, truncated: false, bytes };
}

function toExecError(err: unknown, where: string): ExecError {
  const e = err as { code?: string; message?: string; name?: string };
  if (typeof e.code === "string" && !e.code.startsWith("SQLITE_")) return e as ExecError; // already ours
  const message = `${where}: ${e.message ?? String(err)}`;
  if (e.code?.startsWith("SQLITE_CONSTRAINT")) return { code: "conflict", message };
  if (e.code === "SQLITE_TOOBIG") return { code: "payload_too_large", message };
  // SQLite's own refusals (load_extension, which is disabled; an authorizer denial) are the
  // sandbox saying no, like a refused PRAGMA or ATTACH: 403, not a fault in the SQL.
  if (e.code === "SQLITE_AUTH" || e.message === "not authorized") return { code: "forbidden", message };
  if (e.code === "SQLITE_ERROR" || e.code === "SQLITE_RANGE" || e.code === "SQLITE_MISMATCH") {
    return { code: "invalid_request", message };
  }
  if (e.name === "RangeError" || e.name === "TypeError") return { code: "invalid_request", message };
  return { code: "internal_error", message };
}

// Prepared statements per connection, most recently used last (preparing costs more than a
// point query). A cached statement is reused only when no other use of it is running.
const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();
const CACHE_SIZE = 256;

function prepare(db: Database.Database, sql: string): Database.Statement {
  let stmts = cache.get(db);
  if (stmts === undefined) {
    stmts = new Map();
    cache.set(db, stmts);
  }
  const hit = stmts.get(sql);
  const stmt = hit !== undefined && !hit.busy ? hit : db.prepare(sql); // refuses more than one statement
  setRecent(stmts, sql, stmt, CACHE_SIZE);
  return stmt;
}

// The engine's own statements, kept apart from the cache of user statements.
const internals = new WeakMap<Database.Database, { changes: Database.Statement; lastId: Database.Statement }>();
function internal(db: Database.Database) {
  let own = internals.get(db);
  if (own === undefined) {
    own = {
      changes: db.prepare("SELECT changes()").pluck(),
      lastId: db.prepare("SELECT last_insert_rowid()").pluck().safeIntegers(true),
    };
    internals.set(db, own);
  }
  return own;
}

/**
 * Whether a statement inserts (its verb, after any `WITH …` list, is INSERT or REPLACE) and
 * whether it is an upsert (`ON CONFLICT … DO UPDATE`), by its tokens.
 */
function insertKind(sql: string): "insert" | "upsert" | null {
  const tokens = leadingTokens(sql, 4096);
  let depth = 0;
  let verb: string | undefined = tokens[0] === "WITH" ? undefined : tokens[0];
  for (const t of verb === undefined ? tokens : []) {
    if (t === "(") depth++;
    else if (t === ")") depth--;
    else if (depth === 0 && ["SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "VALUES"].includes(t)) {
      verb = t;
      break;
    }
  }
  if (verb !== "INSERT" && verb !== "REPLACE") return null;
  const text = tokens.join(" ");
  return text.includes("DO UPDATE") ? "upsert" : "insert";
}

function runOne(
  db: Database.Database,
  st: Statement,
  readOnly: boolean,
  where: string,
  /** Row bytes the whole answer may still carry (a batch's statements share one budget). */
  budget: { bytes: number },
): { result: QueryResult; wrote: boolean } {
  if (typeof st.sql !== "string" || st.sql.trim() === "")
    throw { code: "invalid_request", message: `${where}: sql is empty` };
  const stmt = prepare(db, st.sql);
  if (readOnly && !stmt.readonly) {
    throw {
      code: "forbidden",
      message: `${where}: this statement writes; the credential allows only reads (a read-only credential, or db_query without db_exec)`,
    };
  }
  if (!stmt.readonly && namesChangeLog(st.sql)) {
    throw {
      code: "forbidden",
      message: `${where}: _prim_changes and _prim_outbox are the engine's change log and outbox; they cannot be written`,
    };
  }
  stmt.safeIntegers(true);
  const args = bindings(st.params, `${where}.params`);
  // last_insert_rowid: for an INSERT/REPLACE that changed rows, SQLite's value after it; an
  // upsert may have only updated, so it counts only if the value moved.
  const own = internal(db);
  const kind = stmt.readonly ? null : insertKind(st.sql);
  const rowidBefore = kind === "upsert" ? (own.lastId.get() as bigint) : null;
  const insertedRowid = (): number | string | null => {
    if (kind === null) return null;
    const after = own.lastId.get() as bigint;
    return kind === "upsert" && after === rowidBefore ? null : (outValue(after) as number | string);
  };
  if (!stmt.reader) {
    const info = stmt.run(...args);
    return {
      result: {
        columns: [],
        rows: [],
        rows_affected: info.changes,
        last_insert_rowid: info.changes > 0 ? insertedRowid() : null,
        truncated: false,
      },
      wrote: !stmt.readonly,
    };
  }
  const { rows, truncated, bytes } = collectRows(
    stmt.iterate(...args) as Iterable<Record<string, unknown>>,
    budget.bytes,
  );
  budget.bytes -= bytes;
  // Read after running: a cached statement is recompiled when the schema changed.
  const columns = stmt.columns().map((c) => c.name);
  const changes = stmt.readonly ? 0 : Number(own.changes.get());
  const lastId = changes > 0 ? insertedRowid() : null;
  return {
    result: { columns, rows, rows_affected: changes, last_insert_rowid: lastId, truncated },
    wrote: !stmt.readonly,
  };
}

const tempChecks = new WeakMap<Database.Database, Database.Statement>();

/**
 * Drops every TEMP table, view and trigger the request made. They would outlive the request on
 * the host's connection only — not after a restart of the host, and not on the engine's own
 * read connection (engine README, db), where an unqualified name would then mean another table.
 * So TEMP objects live for one request: a `/batch` can use them. (The temp schema is read only
 * once something opened the temp database: even preparing a read of it would open it.)
 */
export function dropTempObjects(db: Database.Database): void {
  let tempOpen = tempChecks.get(db);
  if (tempOpen === undefined) {
    tempOpen = db.prepare("SELECT 1 FROM pragma_database_list WHERE name = 'temp'").pluck();
    tempChecks.set(db, tempOpen);
  }
  if (tempOpen.get() === undefined) return;
  const objects = db
    .prepare(
      "SELECT type, name FROM sqlite_temp_schema WHERE type IN ('trigger', 'view', 'table') ORDER BY type = 'table', type = 'view'",
    )
    .all() as { type: string; name: string }[];
  for (const { type, name } of objects)
    db.exec(`DROP ${type.toUpperCase()} IF EXISTS temp."${name.replaceAll('"', '""')}"`);
}

/**
 * Runs one statement, or a batch in one transaction (any failure rolls all back, naming its
 * index). A batch's results share the 10 MiB row budget of one answer: once it is spent, later
 * statements still run (the transaction is all or nothing) and return their rows cut, with
 * `truncated: true`. With `record`, each statement that wrote is recorded in the same
 * transaction (a single statement then runs in one of its own): the change log (host-changes.ts).
 */
export function execute(
  db: Database.Database,
  statements: Statement[],
  batch: boolean,
  readOnly: boolean,
  record?: (st: Statement, result: QueryResult) => void,
  /** Runs last in the transaction, once every statement succeeded (the outbox's rows). */
  finish?: () => void,
): { value: unknown; wrote: boolean } {
  if (!batch) {
    const st = statements[0] as Statement;
    const one = () => {
      const out = runOne(db, st, readOnly, "sql", { bytes: MAX_RESULT_BYTES });
      if (out.wrote) record?.(st, out.result);
      finish?.();
      return finish === undefined ? out : { ...out, wrote: true };
    };
    try {
      const { result, wrote } = record === undefined && finish === undefined ? one() : db.transaction(one)();
      return { value: result, wrote };
    } catch (err) {
      throw toExecError(err, "sql");
    }
  }
  let wrote = false;
  const budget = { bytes: MAX_RESULT_BYTES };
  const run = () =>
    statements.map((st, i) => {
      try {
        const out = runOne(db, st, readOnly, `statements[${i}]`, budget);
        wrote ||= out.wrote;
        if (out.wrote) record?.(st, out.result);
        return out.result;
      } catch (err) {
        const e = toExecError(err, `statements[${i}]`);
        throw { ...e, message: `${e.message}; the batch was rolled back` };
      }
    });
  const results = db.transaction(() => {
    const out = run();
    if (finish !== undefined) {
      finish();
      wrote = true;
    }
    return out;
  })();
  return { value: { results }, wrote };
}
