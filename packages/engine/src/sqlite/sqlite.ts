import Database from "better-sqlite3";
import { privateFile } from "./private-files.js";

/**
 * Opens a SQLite file the way every engine file is opened: WAL (readers never wait for the
 * writer), synchronous=NORMAL (a commit survives a crash of the process at once, and a power
 * cut once the WAL is checkpointed; a power cut can lose the last transactions but never
 * corrupts), and a busy timeout for the connections that share a file within the one engine
 * that owns the directory — the audit writer's thread beside the trail's reader. No other
 * process opens these files: the data-directory lock refuses a second engine, and `prim mcp`
 * relays to the `prim dev` that owns the directory, or, with none running, is that one engine
 * itself (cli/src/mcp-command.ts).
 */
export const SQLITE_PRAGMAS = [
  "journal_mode = WAL",
  "synchronous = NORMAL",
  "busy_timeout = 5000",
  "foreign_keys = ON",
];

/**
 * `exclusive` holds the file's lock for the connection's lifetime (no shared-memory WAL
 * index, cheaper transactions): right for files only this connection ever opens, such as a
 * primitive's file in a locked data directory. The file is created (or tightened) 0600 first,
 * and SQLite gives its -wal and -shm files the same mode.
 */
export function openSqlite(path: string, options: { exclusive?: boolean } = {}): Database.Database {
  const db = new Database(privateFile(path));
  if (options.exclusive) db.pragma("locking_mode = EXCLUSIVE");
  for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
  return db;
}

/**
 * Runs a function in a transaction of `db` (a savepoint when one is open), with one wrapper
 * made here: better-sqlite3's `db.transaction(fn)` builds four wrapper functions per call,
 * a cost hot paths paid per write.
 */
export function transactionRunner(db: Database.Database): <T>(work: () => T) => T {
  const run = db.transaction((work: () => unknown) => work());
  return <T>(work: () => T) => run(work) as T;
}
