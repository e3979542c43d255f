import Database from "better-sqlite3";

/**
 * Opens a SQLite file the way every engine file is opened: WAL (readers never wait for the
 * writer), synchronous=NORMAL (a commit is durable once the WAL is checkpointed; a power cut
 * can lose the last transactions but never corrupts), and a busy timeout for other processes
 * (a stdio MCP server sharing the data directory).
 */
export function openSqlite(path: string, options: { readonly?: boolean } = {}): Database.Database {
  const db = new Database(path, { readonly: options.readonly ?? false });
  if (!options.readonly) db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  return db;
}
