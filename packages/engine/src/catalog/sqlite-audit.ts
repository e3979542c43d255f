import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { AuditEntry } from "../core/types.js";
import { openSqlite, SQLITE_PRAGMAS } from "../storage/sqlite.js";
import { AUDIT_INSERT, AUDIT_SCHEMA } from "./audit-schema.js";
import type { AuditFilter, AuditRecord } from "./catalog.js";

interface AuditRow extends Omit<AuditEntry, "group" | "detail"> {
  seq: number;
  group_name: string;
  detail: string | null;
}

/** Escapes LIKE wildcards so a prefix filter matches literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The writer thread: appends each batch in one transaction and acknowledges it by `seq`. It is
 * plain JavaScript evaluated in a worker (so it runs the same from sources and from `dist/`)
 * and opens the file with the same pragmas as `openSqlite`.
 */
const WRITER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
for (const pragma of workerData.pragmas) db.pragma(pragma);
const insert = db.prepare(workerData.insert);
const appendAll = db.transaction((rows) => {
  for (const row of rows) insert.run({ ...row, detail: row.detail === null ? null : JSON.stringify(row.detail) });
});
parentPort.on("message", (message) => {
  if (message.close) { db.close(); parentPort.postMessage({ closed: true }); return; }
  if (message.prune !== undefined) {
    try { parentPort.postMessage({ seq: message.seq, pruned: db.prepare("DELETE FROM audit WHERE ts < ?").run(message.prune).changes }); }
    catch (err) { parentPort.postMessage({ seq: message.seq, error: String(err) }); }
    return;
  }
  try { appendAll(JSON.parse(message.rows)); parentPort.postMessage({ seq: message.seq }); }
  catch (err) { parentPort.postMessage({ seq: message.seq, error: String(err) }); }
});
`;
const driver = createRequire(import.meta.url).resolve("better-sqlite3");

/**
 * `audit.sqlite`: appends go to a worker thread (one transaction per batch), reads run here on
 * a connection of their own. `append` resolves once the batch is stored.
 */
export class SqliteAudit {
  private readonly reader: Database.Database;
  private readonly worker: Worker;
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (pruned?: number) => void; reject: (err: Error) => void }>();
  private readonly inflight = new Set<Promise<void>>();

  constructor(path: string) {
    // Create the schema before either connection needs it.
    this.reader = openSqlite(path);
    this.reader.exec(AUDIT_SCHEMA);
    this.worker = new Worker(WRITER_SOURCE, {
      eval: true,
      workerData: { path, driver, pragmas: SQLITE_PRAGMAS, insert: AUDIT_INSERT },
    });
    this.worker.unref();
    this.worker.on("message", (message: { seq?: number; error?: string; pruned?: number }) => {
      if (message.seq === undefined) return;
      const waiter = this.pending.get(message.seq);
      this.pending.delete(message.seq);
      if (message.error === undefined) waiter?.resolve(message.pruned);
      else waiter?.reject(new Error(message.error));
    });
    this.worker.on("error", (err) => {
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
    });
  }

  append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    const seq = ++this.seq;
    const stored = new Promise<void>((resolve, reject) => {
      this.pending.set(seq, { resolve: () => resolve(), reject });
      // One string crosses to the writer thread: cheaper to make than a structured clone of the
      // entries; the writer parses it and serialises each `detail` itself.
      this.worker.postMessage({ seq, rows: JSON.stringify(entries) });
    });
    this.inflight.add(stored);
    const done = () => this.inflight.delete(stored);
    stored.then(done, done);
    return stored;
  }

  /** Deletes entries older than `before` (on the writer thread, like every write). */
  prune(before: number): Promise<number> {
    const seq = ++this.seq;
    return new Promise<number>((resolve, reject) => {
      this.pending.set(seq, { resolve: (pruned) => resolve(pruned ?? 0), reject });
      this.worker.postMessage({ seq, prune: before });
    });
  }

  list(filter: AuditFilter): AuditRecord[] {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      args.push(...values);
    };
    if (filter.group !== undefined) add("group_name = ?", filter.group);
    if (filter.type !== undefined) add("primitive = ?", filter.type);
    if (filter.primitive !== undefined) add("primitive_id = ?", filter.primitive);
    if (filter.action !== undefined) {
      const a = filter.action;
      if (a.endsWith("*")) add("action LIKE ? ESCAPE '\\'", likePrefix(a.slice(0, -1)));
      else if (a.endsWith(".")) add("action LIKE ? ESCAPE '\\'", likePrefix(a));
      else add("action = ?", a);
    }
    if (filter.actor !== undefined) {
      const a = filter.actor;
      if (a.endsWith("*")) add("actor LIKE ? ESCAPE '\\'", likePrefix(a.slice(0, -1)));
      else add("actor = ?", a);
    }
    if (filter.since !== undefined) add("ts >= ?", filter.since);
    if (filter.until !== undefined) add("ts <= ?", filter.until);
    if (filter.beforeSeq !== undefined) add("seq < ?", filter.beforeSeq);
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`;
    const rows = this.reader.prepare(sql).all(...args, filter.limit) as AuditRow[];
    return rows.map(({ group_name, detail, ...rest }) => ({
      ...rest,
      group: group_name,
      detail: detail === null ? null : JSON.parse(detail),
    }));
  }

  /** Waits for every append, then stops the worker and closes both connections. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
    await new Promise<void>((resolve) => {
      this.worker.once("message", () => resolve());
      this.worker.postMessage({ close: true });
    });
    await this.worker.terminate();
    this.reader.close();
  }
}
