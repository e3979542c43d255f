import { randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";

/**
 * The change log of one primitive, in the primitive's own file. A store appends inside the
 * transaction that makes the change, so the log holds exactly the committed changes: a change
 * rolled back takes its entry with it, a committed one cannot be missing. Entries hold no values.
 */
const schema = (t: string) => `
CREATE TABLE IF NOT EXISTS ${t} (
  seq INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  op TEXT NOT NULL,
  subject TEXT NOT NULL,
  version INTEGER,
  size INTEGER,
  extra TEXT
);
CREATE TABLE IF NOT EXISTS ${t}_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  epoch INTEGER NOT NULL,
  secret BLOB NOT NULL
);
`;

/** How long and how many entries a primitive's log keeps (at least; compaction runs on writes). */
export interface ChangeRetention {
  /** Entries younger than this are kept (default 7 days). */
  maxAgeMs: number;
  /** At most this many newest entries are kept (default 100,000). */
  maxEntries: number;
}

export const DEFAULT_CHANGE_RETENTION: ChangeRetention = { maxAgeMs: 7 * 24 * 3_600_000, maxEntries: 100_000 };

/** The engine's change-log settings (`TenantOptions.changeLog`). */
export interface ChangeLogOptions extends Partial<ChangeRetention> {
  /** False turns recording off (benchmarks only: the feed then misses every change). */
  enabled?: boolean;
}

/** One stored entry. */
export interface ChangeRow {
  seq: number;
  ts: number;
  op: string;
  subject: string;
  version: number | null;
  size: number | null;
  extra: string | null;
}

/** What a store says about one change. */
export interface ChangeFacts {
  version?: number | null | undefined;
  size?: number | null | undefined;
  /** Further fields (fs rename: `to`; queue: `queue`; db: `rows`); never a value. */
  extra?: Record<string, unknown> | undefined;
}

/** Compaction runs at most this often, on a write. */
const COMPACT_INTERVAL_MS = 60_000;
/** …or after this many appends, so a burst cannot outgrow `maxEntries` by much. */
const COMPACT_EVERY = 10_000;

/** What a feed reader needs of a log (a `db` primitive's is read over its own connection). */
export interface ChangeLogView {
  after(seq: number, limit: number): ChangeRow[];
  bounds(): { oldestCursor: number; newest: number };
  state(): { epoch: number; secret: Buffer };
}

/** Where every type but db keeps its log; a db (the user's file) uses `DB_CHANGE_TABLE`. */
export const CHANGE_TABLE = "prim_changes";
/** The log's table in a db primitive's file: a name a user's schema is unlikely to hold. */
export const DB_CHANGE_TABLE = "_prim_changes";

/** Reads a log whose tables exist (`ChangeLog` made them), on any connection, read-only too. */
export class ChangeLogReader implements ChangeLogView {
  private readonly reads: Record<"after" | "bounds" | "state", Database.Statement>;

  constructor(db: Database.Database, table = CHANGE_TABLE) {
    this.reads = {
      after: db.prepare(`SELECT * FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`),
      // Two subqueries: each of min() and max() alone is one step down the primary key, while
      // both in one SELECT scan the whole log (a third of a 100,000-entry feed read).
      bounds: db.prepare(`SELECT (SELECT min(seq) FROM ${table}) AS oldest, (SELECT max(seq) FROM ${table}) AS newest`),
      state: db.prepare(`SELECT epoch, secret FROM ${table}_state WHERE id = 1`),
    };
  }

  /** Entries after `seq`, oldest first, at most `limit`. */
  after(seq: number, limit: number): ChangeRow[] {
    return this.reads.after.all(seq, limit) as ChangeRow[];
  }

  /** The seq a cursor before every held entry names, and the newest seq (0 when never written). */
  bounds(): { oldestCursor: number; newest: number } {
    const row = this.reads.bounds.get() as { oldest: number | null; newest: number | null };
    return { oldestCursor: row.oldest === null ? 0 : row.oldest - 1, newest: row.newest ?? 0 };
  }

  /** The epoch (bumped by a restore, fork or import) and the secret cursors are signed with. */
  state(): { epoch: number; secret: Buffer } {
    return this.reads.state.get() as { epoch: number; secret: Buffer };
  }
}

export class ChangeLog extends ChangeLogReader {
  private readonly stmts;
  private lastCompact = 0;
  private sinceCompact = 0;
  private wakeQueued = false;

  constructor(
    db: Database.Database,
    private readonly clock: Clock,
    private readonly options: { enabled: boolean; retention: ChangeRetention; onCommit?: () => void },
    table = CHANGE_TABLE,
  ) {
    // Files made before change logs existed get the tables on open; nothing else is touched.
    db.exec(schema(table));
    db.prepare(`INSERT OR IGNORE INTO ${table}_state (id, epoch, secret) VALUES (1, 1, ?)`).run(randomBytes(16));
    super(db, table);
    this.stmts = {
      append: db.prepare(`INSERT INTO ${table} (ts, op, subject, version, size, extra) VALUES (?, ?, ?, ?, ?, ?)`),
      bump: db.prepare(`UPDATE ${table}_state SET epoch = max(epoch, ?) + 1`),
      rekey: db.prepare(`UPDATE ${table}_state SET secret = ?`),
      firstYoung: db.prepare(`SELECT seq FROM ${table} WHERE ts >= ? ORDER BY seq LIMIT 1`).pluck(),
      // The newest entry is always kept: its seq is where the next one continues.
      compact: db.prepare(`DELETE FROM ${table} WHERE seq < ? AND seq < (SELECT max(seq) FROM ${table})`),
    };
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Records one change; call it inside the transaction that makes the change. */
  append(op: string, subject: string, facts: ChangeFacts = {}): void {
    if (!this.options.enabled) return;
    const now = this.clock.now();
    this.stmts.append.run(
      now,
      op,
      subject,
      facts.version ?? null,
      facts.size ?? null,
      facts.extra === undefined ? null : JSON.stringify(facts.extra),
    );
    if (++this.sinceCompact >= COMPACT_EVERY || now - this.lastCompact >= COMPACT_INTERVAL_MS) this.compact(now);
    this.queueWake();
  }

  /**
   * Wakes readers waiting on this log once the running synchronous transaction has ended: a
   * microtask runs after it committed or rolled back, and a reader then sees only what committed.
   */
  private queueWake(): void {
    if (this.wakeQueued || this.options.onCommit === undefined) return;
    this.wakeQueued = true;
    queueMicrotask(() => {
      this.wakeQueued = false;
      this.options.onCommit?.();
    });
  }

  /**
   * Starts a new epoch (the file's data was replaced: restore, fork, import), after `before`,
   * the epoch in force until then; `rekey` (a copy under a new id) also draws a new secret.
   */
  newEpoch(before: number, rekey: boolean): void {
    this.stmts.bump.run(before);
    if (rekey) this.stmts.rekey.run(randomBytes(16));
  }

  /** Drops entries past the retention window (always keeping the newest). */
  compact(now = this.clock.now()): void {
    this.lastCompact = now;
    this.sinceCompact = 0;
    const { maxAgeMs, maxEntries } = this.options.retention;
    const { newest } = this.bounds();
    const young = this.stmts.firstYoung.get(now - maxAgeMs) as number | undefined;
    // Whichever bound is tighter: older than the window, or beyond the newest `maxEntries`.
    const keepFrom = Math.max(newest - maxEntries + 1, young ?? newest);
    if (keepFrom > 1) this.stmts.compact.run(keepFrom);
  }
}
