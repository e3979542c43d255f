import { ServiceError } from "../../core/errors.js";

/**
 * The first keyword of a statement, after whitespace, comments and an `EXPLAIN [QUERY PLAN]`
 * prefix. A statement's kind is fixed by its first keyword, so this is enough to refuse whole
 * statement kinds; which statements *write* is decided by SQLite itself (`stmt.readonly`).
 */
export function leadingKeyword(sql: string): string {
  let i = 0;
  const words: string[] = [];
  while (i < sql.length && words.length < 3) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else {
      const match = /^[A-Za-z_]+/.exec(sql.slice(i, i + 64));
      if (match === null) break;
      words.push(match[0].toUpperCase());
      i += match[0].length;
      if (words[0] !== "EXPLAIN") break;
    }
  }
  if (words[0] === "EXPLAIN") return words[1] === "QUERY" ? (words[3] ?? "") : (words[1] ?? "");
  return words[0] ?? "";
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

/** PRAGMAs that only read (schema introspection and checks); everything else is refused. */
const READ_PRAGMAS = new Set([
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
  const keyword = leadingKeyword(sql);
  const refused = REFUSED[keyword];
  if (refused !== undefined) throw new ServiceError("forbidden", `${field}: ${refused}`);
  if (keyword === "PRAGMA") {
    const match = /pragma\s+(?:main\s*\.\s*)?([a-z_]+)\s*(=)?/i.exec(sql);
    const name = match?.[1]?.toLowerCase() ?? "";
    if (!READ_PRAGMAS.has(name) || match?.[2] !== undefined) {
      throw new ServiceError(
        "forbidden",
        `${field}: PRAGMA ${name || "?"} is not allowed; only read-only introspection pragmas are`,
      );
    }
  }
}
