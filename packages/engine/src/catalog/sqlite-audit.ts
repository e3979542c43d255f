import type { Worker } from "node:worker_threads";
import type { AuditEntry } from "@prim/wire";
import type Database from "better-sqlite3";
import { entryModule, startWorker } from "../core/entry-module.js";
import { openSqlite } from "../sqlite/sqlite.js";
import { AUDIT_SCHEMA, auditRow } from "./audit-schema.js";
import type { WriterMessage, WriterReply } from "./audit-writer-thread.js";
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
 * The audit writer thread, shareable by every tenant of a cell (`Cell` holds one). `stop`
 * ends it; each `SqliteAudit` closes only its own file on it.
 */
export class AuditWriter {
  private readonly worker: Worker;
  private seq = 0;
  private failed: Error | null = null;
  private readonly pending = new Map<number, { resolve: (pruned?: number) => void; reject: (err: Error) => void }>();

  constructor() {
    this.worker = startWorker(entryModule(import.meta.url, "audit-writer-thread"));
    this.worker.unref();
    this.worker.on("message", (message: WriterReply) => {
      const waiter = this.pending.get(message.seq);
      this.pending.delete(message.seq);
      if (message.error === undefined) waiter?.resolve(message.pruned);
      else waiter?.reject(new Error(message.error));
    });
    // A thread that died answers nothing more: what waits fails now, and so does what comes.
    const fail = (err: Error) => {
      this.failed ??= err;
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the audit writer thread exited (code ${code})`)));
  }

  /** Sends one message for file `path`; resolves with the thread's answer (`pruned` for a prune). */
  send(path: string, message: Omit<WriterMessage, "seq" | "path">): Promise<number | undefined> {
    if (this.failed !== null) return Promise.reject(this.failed);
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ ...message, seq, path } satisfies WriterMessage);
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * `audit.sqlite`: appends go to a worker thread (one transaction per batch), reads run here on
 * a connection of their own. `append` resolves once the batch is stored.
 */
export class SqliteAudit {
  private readonly reader: Database.Database;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly ownsWriter: boolean;
  private readonly writer: AuditWriter;

  /** `writer`: a cell's shared writer thread; without one, this file gets a thread of its own. */
  constructor(
    private readonly path: string,
    writer?: AuditWriter,
  ) {
    // Create the schema before either connection needs it.
    this.reader = openSqlite(path);
    this.reader.exec(AUDIT_SCHEMA);
    this.ownsWriter = writer === undefined;
    this.writer = writer ?? new AuditWriter();
  }

  append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    // One string of the rows' values crosses to the writer thread (audit-writer-thread.ts).
    const values: unknown[] = [];
    for (const entry of entries) values.push(...auditRow(entry));
    const stored = this.writer.send(this.path, { rows: JSON.stringify(values) });
    this.inflight.add(stored);
    const done = () => this.inflight.delete(stored);
    stored.then(done, done);
    return stored.then(() => {});
  }

  /** Deletes entries older than `before` (on the writer thread, like every write). */
  async prune(before: number): Promise<number> {
    return (await this.writer.send(this.path, { prune: before })) ?? 0;
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

  /** Waits for every append, closes this file on the writer (stopping it if it is ours) and here. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
    await this.writer.send(this.path, { close: true }).catch(() => {});
    if (this.ownsWriter) await this.writer.stop();
    this.reader.close();
  }
}
