import { ServiceError } from "@prim/wire";
import { setRecent } from "../core/recent.js";

/**
 * The leading tokens of a statement (up to `max`), skipping whitespace and comments: words
 * upper-cased (unless `keepCase`: names as written), other characters one by one. Enough to tell a statement's kind, which its first
 * keyword fixes; which statements *write* is decided by SQLite itself (`stmt.readonly`).
 */
export function leadingTokens(sql: string, max: number, keepCase = false): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < sql.length && tokens.length < max) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === "'") {
      // A string literal ('' escapes a quote) is one token, whatever it contains.
      let end = i + 1;
      while (end < sql.length && !(sql[end] === "'" && sql[end + 1] !== "'")) end += sql[end] === "'" ? 2 : 1;
      tokens.push("'");
      i = end + 1;
    } else {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i, i + 128));
      const quoted = /^("[^"]*"|`[^`]*`|\[[^\]]*\])/.exec(sql.slice(i, i + 256));
      if (word !== null) {
        tokens.push(keepCase ? word[0] : word[0].toUpperCase());
        i += word[0].length;
      } else if (quoted !== null) {
        const name = quoted[0].slice(1, -1);
        tokens.push(keepCase ? name : name.toUpperCase());
        i += quoted[0].length;
      } else {
        tokens.push(c);
        i++;
      }
    }
  }
  return tokens;
}

/** The statement's kind: its first keyword after an `EXPLAIN [QUERY PLAN]` prefix. */
export function leadingKeyword(sql: string): string {
  const t = leadingTokens(sql, 4);
  if (t[0] === "EXPLAIN") return t[1] === "QUERY" ? (t[3] ?? "") : (t[1] ?? "");
  return t[0] ?? "";
}

/** Statement kinds that never write, whatever they hold (PRAGMA: only read-only ones pass). */
const NEVER_WRITES = new Set(["SELECT", "VALUES", "PRAGMA"]);
const WRITE_KEYWORDS = new Set(["INSERT", "UPDATE", "DELETE", "REPLACE"]);

/**
 * Whether running `sql` may store more bytes: told from its text before it runs (the limits
 * decide before the call; SQLite's own `readonly` is known only in the SQL host). A SELECT,
 * VALUES, EXPLAIN or PRAGMA never writes; a WITH writes only through INSERT, UPDATE, DELETE or
 * REPLACE after its CTEs; anything else (CREATE, INSERT, …) may. Errs towards "may write": a
 * WITH whose quoted identifier is named like one of those keywords counts as a write.
 */
export function sqlMayWrite(sql: string): boolean {
  if (leadingTokens(sql, 1)[0] === "EXPLAIN") return false; // describes a statement, runs none
  const keyword = leadingKeyword(sql);
  if (NEVER_WRITES.has(keyword)) return false;
  if (keyword !== "WITH") return true;
  return leadingTokens(sql, Number.POSITIVE_INFINITY).some((t) => WRITE_KEYWORDS.has(t));
}

/** Statement kinds user SQL may not run, and why. */
const REFUSED: Readonly<Record<string, string>> = {
  ATTACH: "ATTACH is not allowed: a database can reach only its own file",
  DETACH: "DETACH is not allowed",
  VACUUM: "VACUUM is not allowed (VACUUM INTO could write anywhere); the engine compacts files itself",
  BEGIN: "transaction control is not allowed in /query; use /batch, which runs in one transaction",
  COMMIT: "transaction control is not allowed in /query; use /batch, which runs in one transaction",
  END: "transaction control is not allowed in /query; use /batch, which runs in one transaction",
  ROLLBACK: "transaction control is not allowed in /query; use /batch, which runs in one transaction",
  SAVEPOINT: "transaction control is not allowed in /query; use /batch, which runs in one transaction",
  RELEASE: "transaction control is not allowed in /query; use /batch, which runs in one transaction",
};

/** PRAGMAs that only read and may take an argument (a table or index name). */
const READ_PRAGMA_FUNCTIONS = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
]);

/** PRAGMAs that read a value; with an argument or `=` some would set it, so neither is allowed. */
const READ_PRAGMA_VALUES = new Set([
  "collation_list",
  "function_list",
  "pragma_list",
  "compile_options",
  "user_version",
  "schema_version",
  "page_count",
  "page_size",
  "freelist_count",
]);

/**
 * Refuses statements that would reach outside the database or change how the engine keeps it
 * durable: ATTACH/DETACH, VACUUM (INTO), transaction control and PRAGMAs other than read-only
 * introspection (a PRAGMA may take effect while it is merely prepared, so this runs before
 * SQLite sees the statement). Extension loading is disabled in the driver.
 */
export function checkStatementAllowed(sql: string, field: string): void {
  if (allowed.has(sql)) return;
  refuseIfNotAllowed(sql, field);
  setRecent(allowed, sql, true, ALLOWED_CACHE);
}

/** Statements found allowed (the check depends on the text alone), the oldest dropped first. */
const allowed = new Map<string, true>();
const ALLOWED_CACHE = 1024;

/**
 * PRAGMAs as table-valued functions (`SELECT * FROM pragma_table_info('t')`) that user SQL may
 * name: the read-only introspection ones, and the engine's durability settings (a pragma
 * function cannot set a value: its arguments are a table or schema name). Others are refused
 * wherever they appear in a statement (`pragma_database_list` answers the server's absolute
 * file path, for one).
 */
const PRAGMA_TABLE_FUNCTIONS = new Set(
  [...READ_PRAGMA_FUNCTIONS, ...READ_PRAGMA_VALUES, "journal_mode", "synchronous", "foreign_keys"].map(
    (n) => `PRAGMA_${n.toUpperCase()}`,
  ),
);

/** A `pragma_…` table-valued function the statement names outside the allowed set, if any. */
function refusedPragmaFunction(sql: string): string | undefined {
  // Every token, quoted identifiers included (they come back upper-cased without their quotes);
  // string literals are one opaque token, so a 'pragma_x' in a value is not a call.
  return leadingTokens(sql, Number.POSITIVE_INFINITY).find(
    (t) => t.startsWith("PRAGMA_") && !PRAGMA_TABLE_FUNCTIONS.has(t),
  );
}

function refuseIfNotAllowed(sql: string, field: string): void {
  const keyword = leadingKeyword(sql);
  const refused = REFUSED[keyword];
  if (refused !== undefined) throw new ServiceError("forbidden", `${field}: ${refused}`);
  const fn = refusedPragmaFunction(sql);
  if (fn !== undefined) {
    throw new ServiceError(
      "forbidden",
      `${field}: ${fn.toLowerCase()} is not allowed here; only read-only introspection pragma functions are (${[...READ_PRAGMA_FUNCTIONS].map((n) => `pragma_${n}`).join(", ")}, …)`,
    );
  }
  if (keyword !== "PRAGMA") return;
  // PRAGMA [schema .] name [= value | (arg)]
  let t = leadingTokens(sql, 6);
  if (t[0] === "EXPLAIN") t = t.slice(t[1] === "QUERY" ? 3 : 1);
  let rest = t.slice(1);
  if (rest[1] === ".") rest = rest.slice(2);
  const name = (rest[0] ?? "").toLowerCase();
  const next = rest[1];
  const allowed =
    (READ_PRAGMA_FUNCTIONS.has(name) && next !== "=") || (READ_PRAGMA_VALUES.has(name) && next === undefined) || false;
  const plain = next === undefined || next === ";";
  if (!allowed && !(READ_PRAGMA_VALUES.has(name) && plain)) {
    throw new ServiceError(
      "forbidden",
      `${field}: PRAGMA ${name || "?"} is not allowed here; only read-only introspection pragmas are, without arguments that set values`,
    );
  }
}
