import Database from "better-sqlite3";

/**
 * Opens a SQLite file the way every engine file is opened: WAL (readers never wait for the
 * writer), synchronous=NORMAL (a commit is durable once the WAL is checkpointed; a power cut
 * can lose the last transactions but never corrupts), and a busy timeout for other processes
 * (a stdio MCP server sharing the data directory).
 */
export const SQLITE_PRAGMAS = ["journal_mode = WAL", "synchronous = NORMAL", "busy_timeout = 5000", "foreign_keys = ON"];

export function openSqlite(path: string): Database.Database {
  const db = new Database(path);
  for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
  return db;
}
