// The SQL host: a child process that runs user SQL with better-sqlite3. It exists so that a
// runaway statement can be stopped for real (the engine kills the process; WAL keeps the file
// intact) and so user SQL never blocks the engine's event loop.
process.umask(0o077); // branches, metadata and backups this process creates are private (0700/0600)

import { mkdirSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { checkFile } from "./file-check.js";
import { encodeFrame, FrameReader, READY_FRAME_ID } from "./frames.js";
import { dbLog, recordStatement } from "./host-changes.js";
import { dropTempObjects, type ExecError, execute } from "./host-exec.js";
import { deleteOutbox, enqueueRows, readOutbox } from "./host-outbox.js";
import type { BranchInfo, DbLocation, HostRequest, QueryResult } from "./protocol.js";

// Open connections by path, least recently used first. Bounded: each holds a file descriptor
// and up to 2 MB of page cache, and an engine may have thousands of dbs. A request uses at
// most three files (main or a branch, a branch, meta.sqlite), all among the most recent.
const open = new Map<string, Database.Database>();
const MAX_OPEN_CONNECTIONS = 32;

function connect(path: string): Database.Database {
  let db = open.get(path);
  if (db !== undefined) {
    open.delete(path);
    open.set(path, db);
    return db;
  }
  db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  // A file's own views and triggers run untrusted: no pragma functions or unsafe functions in
  // them (a file may come from an archive; `pragma_database_list` would tell the server's path).
  db.pragma("trusted_schema = OFF");
  open.set(path, db);
  if (open.size > MAX_OPEN_CONNECTIONS) closePath(open.keys().next().value as string);
  return db;
}

function closePath(path: string): void {
  open.get(path)?.close();
  open.delete(path);
}

const branchPath = (at: DbLocation, name: string) => join(at.dir, "branches", `${name}.sqlite`);

/** Per-database metadata: branches and a counter of writes to main (for promote conflicts). */
function meta(at: DbLocation): Database.Database {
  const path = join(at.dir, "meta.sqlite");
  if (!open.has(path)) {
    mkdirSync(join(at.dir, "branches"), { recursive: true });
    connect(path).exec(`
      CREATE TABLE IF NOT EXISTS branches (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL, base_version INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY CHECK (id = 1), main_version INTEGER NOT NULL);
      INSERT OR IGNORE INTO state (id, main_version) VALUES (1, 0);`);
  }
  return connect(path);
}

const mainVersion = (at: DbLocation) => meta(at).prepare("SELECT main_version FROM state").pluck().get() as number;
const bumps = new WeakMap<Database.Database, Database.Statement>();
function bumpMain(at: DbLocation): void {
  const db = meta(at);
  let stmt = bumps.get(db);
  if (stmt === undefined) {
    stmt = db.prepare("UPDATE state SET main_version = main_version + 1");
    bumps.set(db, stmt);
  }
  stmt.run();
}

function fail(code: string, message: string): never {
  throw { code, message } satisfies ExecError;
}

function branchRow(at: DbLocation, name: string) {
  return meta(at).prepare("SELECT * FROM branches WHERE name = ?").get(name) as
    | { name: string; created_at: number; base_version: number }
    | undefined;
}

/** The connection a request addresses: main, or an existing branch (404 otherwise). */
function target(at: DbLocation): Database.Database {
  if (at.branch === undefined) return connect(at.file);
  if (branchRow(at, at.branch) === undefined) fail("not_found", `branch '${at.branch}' not found`);
  return connect(branchPath(at, at.branch));
}

async function createBranch(at: DbLocation, name: string, now: number): Promise<BranchInfo> {
  if (branchRow(at, name) !== undefined) fail("already_exists", `branch '${name}' already exists`);
  const path = branchPath(at, name);
  rmSync(path, { force: true });
  await connect(at.file).backup(path);
  meta(at)
    .prepare("INSERT INTO branches (name, created_at, base_version) VALUES (?, ?, ?)")
    .run(name, now, mainVersion(at));
  return { name, created_at: now, main_changed: false };
}

async function promote(at: DbLocation, name: string, force: boolean): Promise<{ promoted: string }> {
  const branch = branchRow(at, name);
  if (branch === undefined) fail("not_found", `branch '${name}' not found`);
  if (!force && branch.base_version !== mainVersion(at)) {
    fail("branch_conflict", `main changed since branch '${name}' was created; pass force to promote anyway`);
  }
  // The backup API copies the branch into main page by page, in one transaction of main.
  const path = branchPath(at, name);
  const epoch = dbLog(connect(at.file)).state().epoch;
  closePath(at.file);
  await connect(path).backup(at.file);
  renewEpoch(at, epoch);
  closePath(path);
  rmSync(path, { force: true });
  meta(at).prepare("DELETE FROM branches WHERE name = ?").run(name);
  bumpMain(at);
  return { promoted: name };
}

/**
 * After main's data was replaced (a promote, a restore): its change log is the copy's, so it
 * starts a new epoch past the one in force before — cursors issued until now are refused (409).
 */
function renewEpoch(at: DbLocation, before: number): void {
  dbLog(connect(at.file)).newEpoch(before, false);
}

async function restoreMain(at: DbLocation, src: string): Promise<{ restored: true }> {
  const epoch = dbLog(connect(at.file)).state().epoch;
  closePath(at.file);
  await connect(src).backup(at.file);
  closePath(src);
  renewEpoch(at, epoch);
  bumpMain(at);
  return { restored: true };
}

/** Whether the last `exec` changed its file (its reply says so: status 2). */
let execWrote = false;

/** Answers a request: a value, or a promise of one for the few that wait on the backup API. */
function handle(req: HostRequest): unknown {
  execWrote = false;
  switch (req.kind) {
    case "exec": {
      const db = target(req.at);
      let wrote = true; // a failed request may have run a CREATE TEMP before it failed
      try {
        // Main's writes are recorded in its change log, in their transaction (host-changes.ts).
        const log = req.at.branch === undefined && !req.readOnly ? dbLog(db) : undefined;
        const record = log && ((st: { sql: string }, r: QueryResult) => recordStatement(log, st.sql, r));
        // The outbox's rows go last, in the same transaction: none unless every statement succeeded.
        const rows = req.at.branch === undefined && !req.readOnly ? req.outbox : undefined;
        const finish = rows?.length ? () => enqueueRows(db, rows) : undefined;
        const result = execute(db, req.statements, req.batch, req.readOnly, record, finish);
        wrote = result.wrote;
        execWrote = result.wrote;
        if (result.wrote && req.at.branch === undefined) bumpMain(req.at);
        return result.value;
      } finally {
        if (wrote) dropTempObjects(db);
      }
    }
    case "tables":
      return target(req.at)
        .prepare(
          "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND substr(name, 1, 7) <> 'sqlite_' AND substr(name, 1, 13) <> '_prim_changes' AND name <> '_prim_outbox' ORDER BY name",
        )
        .all();
    case "table": {
      const db = target(req.at);
      const row = db
        .prepare("SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?")
        .get(req.name) as { name: string; type: string; sql: string } | undefined;
      if (row === undefined) fail("not_found", `table '${req.name}' not found`);
      const columns = (db.prepare("SELECT * FROM pragma_table_info(?)").all(req.name) as Record<string, unknown>[]).map(
        (c) => ({
          name: c.name,
          type: c.type,
          notnull: c.notnull === 1,
          default: c.dflt_value,
          pk: c.pk,
        }),
      );
      return { ...row, columns };
    }
    case "branch.create":
      return createBranch(req.at, req.name, req.now);
    case "branch.list": {
      const version = mainVersion(req.at);
      return (
        meta(req.at).prepare("SELECT * FROM branches ORDER BY name").all() as {
          name: string;
          created_at: number;
          base_version: number;
        }[]
      ).map(
        (b) =>
          ({ name: b.name, created_at: b.created_at, main_changed: b.base_version !== version }) satisfies BranchInfo,
      );
    }
    case "branch.promote":
      return promote(req.at, req.name, req.force);
    case "branch.delete": {
      if (branchRow(req.at, req.name) === undefined) fail("not_found", `branch '${req.name}' not found`);
      const path = branchPath(req.at, req.name);
      closePath(path);
      for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
      meta(req.at).prepare("DELETE FROM branches WHERE name = ?").run(req.name);
      return { deleted: req.name };
    }
    case "backup":
      return target(req.at)
        .backup(req.dest)
        .then(() => ({ path: req.dest }));
    case "restore":
      // Like a forced promote from a snapshot file: branches stay, but main has changed.
      return restoreMain(req.at, req.src);
    case "changes.open":
      // The engine reads main's change log over its own read-only connection: tables first.
      dbLog(connect(req.at.file));
      return { open: true };
    case "outbox.read":
      return readOutbox(connect(req.at.file), req.limit);
    case "outbox.delete":
      return deleteOutbox(connect(req.at.file), req.ids);
    case "check":
      // Its own read-only connection, closed before the answer (file-check.ts).
      return checkFile(req.at.file, req.schema);
    case "close":
      for (const path of [...open.keys()]) if (path === req.at.file || path.startsWith(req.at.dir)) closePath(path);
      return { closed: true };
  }
}

// Requests run strictly one after another, in arrival order (the engine relies on it). Most
// answer synchronously; while one waits (a backup), later ones queue behind it.
let waitingOn: Promise<void> | null = null;
const queued: { id: number; req: HostRequest }[] = [];
let outbox: Buffer[] = [];
// fd 3 is a socket pair shared with the engine: requests in, replies out.
const channel = new Socket({ fd: 3, readable: true, writable: true });

function reply(id: number, value: unknown, wrote = false): void {
  outbox.push(encodeFrame(id, wrote ? 2 : 0, JSON.stringify(value) ?? "null"));
}

function replyError(id: number, err: unknown): void {
  const e = err as Partial<ExecError> & { message?: string };
  outbox.push(
    encodeFrame(id, 1, JSON.stringify({ code: e.code ?? "internal_error", message: e.message ?? String(err) })),
  );
}

function run(message: { id: number; req: HostRequest }): void {
  let value: unknown;
  try {
    value = handle(message.req);
  } catch (err) {
    replyError(message.id, err);
    return;
  }
  if (!(value instanceof Promise)) {
    reply(message.id, value, execWrote);
    return;
  }
  waitingOn = value.then(
    (v) => reply(message.id, v),
    (err) => replyError(message.id, err),
  );
  void waitingOn.then(() => {
    waitingOn = null;
    drain();
  });
}

/**
 * Runs what can run now, writing each reply before the next request starts: the next one may
 * run until the engine kills this process, and a reply held back until then would be lost —
 * a write that was committed would be reported as interrupted.
 */
function drain(): void {
  while (waitingOn === null && queued.length > 0) {
    run(queued.shift() as { id: number; req: HostRequest });
    flush();
  }
  flush();
}

function flush(): void {
  if (outbox.length === 0) return;
  channel.write(outbox.length === 1 ? (outbox[0] as Buffer) : Buffer.concat(outbox));
  outbox = [];
}

const reader = new FrameReader();
channel.on("data", (chunk: Buffer) => {
  reader.push(chunk, (frame) => {
    queued.push({ id: frame.id, req: JSON.parse(frame.text) as HostRequest });
  });
  drain();
});
// The engine went away: nothing more to do.
channel.on("end", () => process.exit(0));
channel.on("error", () => process.exit(0));
// Requests are timed from here on (host-process.ts): starting is not a statement's time.
channel.write(encodeFrame(READY_FRAME_ID, 0, "{}"));
