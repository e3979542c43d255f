import { join } from "node:path";
import type { TableDetail, TableSummary } from "@prim/wire";
import Database from "better-sqlite3";
import type { OutboxRow } from "../../sql-host/host-outbox.js";
import type { SqlHost } from "../../sql-host/pool.js";
import type { BranchInfo, DbLocation, HostRequest, QueryResult, Statement } from "../../sql-host/protocol.js";
import { ChangeLogReader, type ChangeLogView, DB_CHANGE_TABLE } from "../../sqlite/change-log.js";
import { Coverage, type SyncCounters, WalSync } from "../../sqlite/durable-sync.js";
import { DirectReads } from "./direct-reads.js";

export type { TableDetail, TableSummary };

export interface ExecOptions {
  branch?: string | undefined;
  readOnly: boolean;
  /** Messages to enqueue if the statements commit (main only; db/outbox.ts checked them). */
  outbox?: OutboxRow[] | undefined;
}

/**
 * A `db` primitive: its file is the user's database, reached through the SQL host — except
 * bounded reads of main, which the engine answers itself (see direct-reads.ts).
 */
export class DbStore {
  private readonly direct: DirectReads;
  /** Files the host wrote since the last `synced()`, and each file's fsync rounds. */
  private readonly dirty = new Set<string>();
  private readonly coverage = new Map<string, Coverage>();
  /** How many times main's file was replaced (promote, restore): its outbox may hold other rows since. */
  get generation(): number {
    return this.replaced;
  }
  private replaced = 0;
  /** Main's change log, read over a read-only connection of its own (the host appends). */
  private log: { db: Database.Database; reader: ChangeLogReader } | undefined;

  constructor(
    private readonly host: SqlHost,
    private readonly file: string,
    private readonly dir: string,
    private readonly syncs: SyncCounters,
    /** Told once a request changed main (a feed reader may be waiting). */
    private readonly changed: () => void = () => {},
  ) {
    this.direct = new DirectReads(file);
  }

  /**
   * What a durable call waits for: an fsync of each file the host wrote for it (or for a call
   * before it) — the database or branch, and the metadata file that counts main's writes. The
   * host commits with synchronous=NORMAL and answers at once; the engine fsyncs the WAL files
   * itself (sqlite/durable-sync.ts), so the host never waits and concurrent writers share
   * rounds.
   */
  synced(): Promise<unknown> | undefined {
    for (const path of this.dirty) {
      let coverage = this.coverage.get(path);
      if (coverage === undefined) {
        coverage = new Coverage(new WalSync(path, this.syncs, false));
        this.coverage.set(path, coverage);
      }
      coverage.wrote();
    }
    this.dirty.clear();
    const pending: Promise<void>[] = [];
    for (const coverage of this.coverage.values()) {
      const round = coverage.covered();
      if (round !== undefined) pending.push(round);
    }
    return pending.length === 0 ? undefined : pending.length === 1 ? pending[0] : Promise.all(pending);
  }

  /**
   * Notes the files a request may have written (once answered, its commits are in their WAL):
   * the database or branch it ran on, a new branch's copy, and the metadata (branches, main's
   * write counter). Reads, listings and backups (a copy elsewhere, synced by the engine) write none.
   */
  private wrote(req: HostRequest): void {
    const at = req.at;
    // An exec that failed may have written before it failed (a batch rolls back, but say so).
    if (req.kind === "exec" && (req.readOnly || req.wrote === false)) return;
    if (req.kind === "exec" || req.kind === "branch.promote" || req.kind === "restore") {
      this.dirty.add(at.branch === undefined ? this.file : this.branchFile(at.branch));
    } else if (req.kind === "branch.create") this.dirty.add(this.branchFile(req.name));
    else if (req.kind !== "branch.delete") return;
    this.dirty.add(join(this.dir, "meta.sqlite"));
  }

  private branchFile(name: string): string {
    return join(this.dir, "branches", `${name}.sqlite`);
  }

  /**
   * A statement run by the SQL host (a query the engine could not answer itself, or a batch).
   * It may write, so the direct reads' snapshot ends before it is sent and again when it is
   * answered: no read after the answer misses what it wrote.
   */
  private runOnHost<T>(req: HostRequest): Promise<T> {
    return this.bracketed(req, () => this.direct.release());
  }

  /**
   * A request that replaces or removes main's file (promote, restore, close): the direct
   * connection is dropped before and after, so it never reads a file the host swapped or unlinked.
   * (Branch files are never read directly.)
   */
  private manage<T>(req: HostRequest): Promise<T> {
    this.replaced++;
    return this.bracketed(req, () => {
      this.direct.close();
      this.closeLog();
    });
  }

  /** Main's change log (host-changes.ts): its tables made by the host first, then read here. */
  async changeLog(): Promise<ChangeLogView> {
    if (this.log === undefined) {
      await this.host.request({ kind: "changes.open", at: this.at() });
      const db = new Database(this.file, { readonly: true, fileMustExist: true });
      this.log ??= { db, reader: new ChangeLogReader(db, DB_CHANGE_TABLE) };
      if (this.log.db !== db) db.close();
    }
    return this.log.reader;
  }

  private closeLog(): void {
    this.log?.db.close();
    this.log = undefined;
  }

  private async bracketed<T>(req: HostRequest, end: () => void): Promise<T> {
    end();
    try {
      return await this.request<T>(req);
    } finally {
      end();
    }
  }

  /** A host request; one that may write marks its files for the next `synced()`, even if it failed. */
  private async request<T>(req: HostRequest): Promise<T> {
    try {
      return await this.host.request<T>(req);
    } finally {
      this.wrote(req);
      if ((req.kind === "exec" && req.wrote === true && req.at.branch === undefined) || req.kind === "restore") {
        this.changed();
      } else if (req.kind === "branch.promote") this.changed();
    }
  }

  private at(branch?: string): DbLocation {
    return { file: this.file, dir: this.dir, branch };
  }

  /** With `outbox`, its messages are written in the statement's transaction (host-outbox.ts). */
  query(statement: Statement, options: ExecOptions): Promise<QueryResult> {
    const direct = options.branch === undefined && options.outbox === undefined;
    const answered = direct ? this.direct.tryQuery(statement) : undefined;
    if (answered !== undefined) return Promise.resolve(answered);
    return this.runOnHost({
      kind: "exec",
      at: this.at(options.branch),
      statements: [statement],
      batch: false,
      readOnly: options.readOnly,
      ...(options.outbox === undefined ? {} : { outbox: options.outbox }),
    });
  }

  batch(statements: Statement[], options: ExecOptions): Promise<{ results: QueryResult[] }> {
    return this.runOnHost({
      kind: "exec",
      at: this.at(options.branch),
      statements,
      batch: true,
      readOnly: options.readOnly,
      ...(options.outbox === undefined ? {} : { outbox: options.outbox }),
    });
  }

  /** The oldest messages waiting in main's outbox (outbox-drain.ts). */
  readOutbox(limit: number): Promise<OutboxRow[]> {
    return this.host.request({ kind: "outbox.read", at: this.at(), limit });
  }

  /** Deletes delivered messages from main's outbox. */
  deleteOutbox(ids: string[]): Promise<unknown> {
    return this.host.request({ kind: "outbox.delete", at: this.at(), ids });
  }

  tables(branch?: string): Promise<TableSummary[]> {
    return this.host.request({ kind: "tables", at: this.at(branch) });
  }

  table(name: string, branch?: string): Promise<TableDetail> {
    return this.host.request({ kind: "table", at: this.at(branch), name });
  }

  createBranch(name: string, now: number): Promise<BranchInfo> {
    return this.request({ kind: "branch.create", at: this.at(), name, now });
  }

  branches(): Promise<BranchInfo[]> {
    return this.host.request({ kind: "branch.list", at: this.at() });
  }

  promote(name: string, force: boolean): Promise<{ promoted: string }> {
    return this.manage({ kind: "branch.promote", at: this.at(), name, force });
  }

  deleteBranch(name: string): Promise<{ deleted: string }> {
    return this.request({ kind: "branch.delete", at: this.at(), name });
  }

  /** A consistent copy of the database (SQLite's backup API) written to `dest`. */
  backup(dest: string): Promise<unknown> {
    return this.host.request({ kind: "backup", at: this.at(), dest });
  }

  /** Makes main exactly the database at `src` (a snapshot); branches are kept. */
  restore(src: string): Promise<unknown> {
    return this.manage({ kind: "restore", at: this.at(), src });
  }

  close(): Promise<unknown> {
    for (const coverage of this.coverage.values()) coverage.close();
    return this.manage({ kind: "close", at: this.at() });
  }
}
