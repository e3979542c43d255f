import { type KvEncoding, type KvEntry, ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import { RAW_JSON } from "../../core/raw-json.js";
import { ITEM_OVERHEAD_BYTES, type ResponseBudget } from "../../core/response-budget.js";
import { GroupCommit } from "../../sqlite/group-commit.js";
import type { ChangeLog } from "../changes/log.js";
import { ReadCache, withJson } from "./read-cache.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  key TEXT PRIMARY KEY,
  value BLOB,
  encoding TEXT NOT NULL,
  version INTEGER NOT NULL,
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
); -- a rowid table: values up to 1 MiB make WITHOUT ROWID leaves slow (measured 2x on 1 KiB values)
CREATE INDEX IF NOT EXISTS kv_by_expiry ON kv (expires_at) WHERE expires_at IS NOT NULL;
`;

/** A value's bytes in a JSON answer, from its stored length alone (bytes travel as base64). */
const ANSWER_BYTES_SQL =
  "(CASE encoding WHEN 'bytes' THEN (octet_length(value) + 2) / 3 * 4 ELSE octet_length(value) END)";
const META_COLUMNS = "key, encoding, version, expires_at, created_at, updated_at";

/** Expired rows are deleted at most this often, on a write; reads filter them out anyway. */
const SWEEP_INTERVAL_MS = 60_000;

interface Row {
  key: string;
  value: string | Buffer | null;
  encoding: KvEncoding;
  version: number;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

type RowMeta = Pick<Row, "version" | "created_at" | "expires_at">;

/** A value ready to store: JSON text, or raw bytes. */
export interface StoredValue {
  data: string | Buffer;
  encoding: KvEncoding;
  /** For JSON: the value as given, returned as-is instead of parsing `data` again. */
  json?: unknown;
}

export interface SetRequest {
  key: string;
  value: StoredValue;
  ttlMs?: number | undefined;
  ifVersion?: number | undefined;
}

function toEntry(row: Row, withValue: boolean): KvEntry {
  const entry: KvEntry = {
    key: row.key,
    encoding: row.encoding,
    version: row.version,
    expires_at: row.expires_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
  if (withValue) entry.value = decodeValue(row);
  return entry;
}

function decodeValue(row: Row): unknown {
  if (row.encoding === "bytes") return Buffer.from(row.value as Buffer).toString("base64");
  return JSON.parse(String(row.value));
}

/** A failed `if_version`; mset adds the item index to the message. */
function versionMismatch(key: string, expected: number, actual: number): ServiceError {
  let why: string;
  if (actual === 0) why = "does not exist";
  else if (expected === 0) why = `already exists (version ${actual})`;
  else why = `has version ${actual}`;
  return new ServiceError("precondition_failed", `key '${key}' ${why}; if_version was ${expected}`);
}

/** The kv primitive over its SQLite file. All times come from the engine's clock. */
export class KvStore {
  private lastSweep = 0;
  private readonly stmts;
  private readonly cache = new ReadCache();
  // Writes go through group commit: concurrent writers share one transaction and commit.
  private readonly writes: GroupCommit;
  // A multi-item write runs in its own savepoint inside the shared transaction.
  private readonly setAllTx: (reqs: readonly SetRequest[]) => KvEntry[];

  constructor(
    db: Database.Database,
    private readonly clock: Clock,
    private readonly changes: ChangeLog,
  ) {
    db.exec(SCHEMA);
    this.stmts = {
      get: db.prepare("SELECT * FROM kv WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)"),
      // What a write needs of the current row, without reading its value.
      meta: db.prepare(
        "SELECT version, created_at, expires_at FROM kv WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",
      ),
      upsert: db.prepare(
        `INSERT INTO kv (key, value, encoding, version, expires_at, created_at, updated_at)
         VALUES (@key, @value, @encoding, @version, @expires_at, @created_at, @updated_at)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, encoding = excluded.encoding,
           version = excluded.version, expires_at = excluded.expires_at,
           created_at = excluded.created_at, updated_at = excluded.updated_at`,
      ),
      // A write without if_version in one statement: the version and created_at carry on
      // unless the old row had expired (then the key starts again).
      upsertReturning: db.prepare(
        `INSERT INTO kv (key, value, encoding, version, expires_at, created_at, updated_at)
         VALUES (@key, @value, @encoding, 1, @expires_at, @now, @now)
         ON CONFLICT (key) DO UPDATE SET
           version = CASE WHEN kv.expires_at IS NOT NULL AND kv.expires_at <= @now THEN 1 ELSE kv.version + 1 END,
           created_at = CASE WHEN kv.expires_at IS NOT NULL AND kv.expires_at <= @now THEN @now ELSE kv.created_at END,
           value = excluded.value, encoding = excluded.encoding, expires_at = excluded.expires_at, updated_at = @now
         RETURNING version, created_at`,
      ),
      delete: db.prepare("DELETE FROM kv WHERE key = ?"),
      // Listings read values only when asked, and then with their answer size, so a page can
      // end at the response budget.
      listKeys: db.prepare(
        `SELECT ${META_COLUMNS} FROM kv WHERE key > ? AND key >= ? AND (expires_at IS NULL OR expires_at > ?)
         ORDER BY key LIMIT ?`,
      ),
      listValues: db.prepare(
        `SELECT ${META_COLUMNS}, ${ANSWER_BYTES_SQL} AS size, value FROM kv
         WHERE key > ? AND key >= ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY key LIMIT ?`,
      ),
      // mget under a budget: the value is read only when it fits the room left.
      getWithin: db.prepare(
        `SELECT ${META_COLUMNS}, ${ANSWER_BYTES_SQL} AS size,
           CASE WHEN ${ANSWER_BYTES_SQL} <= @room THEN value END AS value
         FROM kv WHERE key = @key AND (expires_at IS NULL OR expires_at > @now)`,
      ),
      count: db.prepare("SELECT count(*) AS n FROM kv WHERE expires_at IS NULL OR expires_at > ?"),
      sweep: db.prepare("DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING key, version"),
      due: db.prepare("SELECT 1 FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT 1").pluck(),
    };
    this.writes = new GroupCommit(db);
    this.setAllTx = db.transaction((reqs: readonly SetRequest[]) => {
      const now = this.clock.now();
      return reqs.map((req, i) => {
        try {
          return this.setInTx(req, now);
        } catch (err) {
          throw withIndex(err, i, "nothing was written");
        }
      });
    });
  }

  private live(key: string, now: number): Row | undefined {
    return this.stmts.get.get(key, now) as Row | undefined;
  }

  private liveMeta(key: string, now: number): RowMeta | undefined {
    return this.stmts.meta.get(key, now) as RowMeta | undefined;
  }

  get(key: string): KvEntry | null {
    return this.read(key, this.clock.now());
  }

  /**
   * `mget` within a response budget: entries (or null for a missing key) in request order for
   * as many keys as fit; the answer is shorter than `keys` when the budget ran out. A value
   * that does not fit is never read.
   */
  mgetWithin(keys: readonly string[], budget: ResponseBudget): (KvEntry | null)[] {
    const now = this.clock.now();
    const out: (KvEntry | null)[] = [];
    for (const key of keys) {
      const cached = this.cache.get(key, now);
      if (cached !== undefined) {
        if (!budget.take((cached[RAW_JSON] as string).length)) break;
        out.push(cached);
        continue;
      }
      const overhead = ITEM_OVERHEAD_BYTES + key.length;
      const row = this.stmts.getWithin.get({ key, now, room: budget.room - overhead }) as
        | (Row & { size: number })
        | undefined;
      if (row === undefined) {
        if (!budget.take(4)) break; // null
        out.push(null);
        continue;
      }
      // The same test the statement made: a value it left unread (null) does not fit.
      if (!budget.take(overhead + row.size)) break;
      out.push(this.filled(row));
    }
    return out;
  }

  /** A live entry, from the read cache or the file (which then fills the cache). */
  private read(key: string, now: number): KvEntry | null {
    const cached = this.cache.get(key, now);
    if (cached !== undefined) return cached;
    const row = this.live(key, now);
    if (row === undefined) return null;
    return this.filled(row);
  }

  /** The entry of a row read from the file, put in the read cache. */
  private filled(row: Row): KvEntry {
    const entry = toEntry(row, true);
    return this.cache.fill(entry, row.encoding === "json" ? String(row.value) : JSON.stringify(entry.value));
  }

  /** One write; checks `ifVersion` (0 = must not exist) against the live row. */
  set(req: SetRequest): Promise<KvEntry> {
    return this.writes.run(() => this.setInTx(req, this.clock.now()));
  }

  /** Several writes, all or none; the first failure rolls all back (its index is named). */
  setAll(reqs: readonly SetRequest[]): Promise<KvEntry[]> {
    return this.writes.run(() => this.setAllTx(reqs));
  }

  private setInTx(req: SetRequest, now: number): KvEntry {
    this.maybeSweep(now);
    this.cache.delete(req.key);
    const expiresAt = req.ttlMs === undefined ? null : now + req.ttlMs;
    let row: Row;
    if (req.ifVersion === undefined) {
      const written = this.stmts.upsertReturning.get({
        key: req.key,
        value: req.value.data,
        encoding: req.value.encoding,
        expires_at: expiresAt,
        now,
      }) as Pick<Row, "version" | "created_at">;
      row = {
        key: req.key,
        value: req.value.data,
        encoding: req.value.encoding,
        expires_at: expiresAt,
        updated_at: now,
        ...written,
      };
    } else {
      const current = this.liveMeta(req.key, now);
      checkVersion(req.key, req.ifVersion, current);
      row = {
        key: req.key,
        value: req.value.data,
        encoding: req.value.encoding,
        version: (current?.version ?? 0) + 1,
        expires_at: expiresAt,
        created_at: current?.created_at ?? now,
        updated_at: now,
      };
      this.stmts.upsert.run(row);
    }
    this.changes.append("set", req.key, { version: row.version, size: sizeOf(req.value.data) });
    if (req.value.encoding === "bytes") return toEntry(row, true);
    const entry = toEntry(row, false);
    entry.value = req.value.json;
    return withJson(entry, req.value.data as string);
  }

  delete(key: string, ifVersion?: number): Promise<boolean> {
    return this.writes.run(() => this.deleteOne(key, ifVersion));
  }

  mdelete(keys: readonly string[]): Promise<number> {
    return this.writes.run(() => keys.filter((key) => this.deleteOne(key, undefined)).length);
  }

  /** Checks before it writes, so a failure leaves nothing behind. */
  private deleteOne(key: string, ifVersion: number | undefined): boolean {
    const current = this.liveMeta(key, this.clock.now());
    checkVersion(key, ifVersion, current);
    this.cache.delete(key);
    // An expired row is deleted too, but it was already missing: not counted (its feed entry
    // says it expired).
    if (this.stmts.delete.run(key).changes === 0) return false;
    this.changes.append(current === undefined ? "expire" : "delete", key, current && { version: current.version });
    return current !== undefined;
  }

  /**
   * Adds `by` to an integer value (a missing key counts as 0). With `ttlMs` the expiry is
   * set anew; without it an existing expiry is kept, so a windowed counter keeps its window.
   */
  incr(key: string, by: number, ttlMs?: number): Promise<KvEntry> {
    return this.writes.run(() => this.incrInTx(key, by, ttlMs));
  }

  private incrInTx(key: string, by: number, ttlMs: number | undefined): KvEntry {
    const now = this.clock.now();
    this.maybeSweep(now);
    this.cache.delete(key);
    const current = this.live(key, now);
    let base = 0;
    if (current !== undefined) {
      const value = current.encoding === "json" ? JSON.parse(String(current.value)) : undefined;
      if (!Number.isSafeInteger(value)) {
        throw new ServiceError("conflict", `key '${key}' does not hold an integer; incr needs an integer value`);
      }
      base = value as number;
    }
    const next = base + by;
    if (!Number.isSafeInteger(next)) {
      throw new ServiceError("conflict", `incrementing key '${key}' would leave the safe integer range`);
    }
    const row: Row = {
      key,
      value: JSON.stringify(next),
      encoding: "json",
      version: (current?.version ?? 0) + 1,
      expires_at: ttlMs !== undefined ? now + ttlMs : (current?.expires_at ?? null),
      created_at: current?.created_at ?? now,
      updated_at: now,
    };
    this.stmts.upsert.run(row);
    this.changes.append("set", key, { version: row.version, size: sizeOf(row.value as string) });
    return toEntry(row, true);
  }

  /**
   * Live keys after `after` that start with `prefix`, in key order; `limit + 1` rows at most.
   * With a budget, the rows stop where the next one would not fit (`budget.cut` tells).
   */
  list(opts: { prefix: string; after: string; limit: number; values: boolean; budget?: ResponseBudget }): KvEntry[] {
    const statement = opts.values ? this.stmts.listValues : this.stmts.listKeys;
    // Stepped one row at a time, so rows past the budget are never read.
    const rows = statement.iterate(opts.after, opts.prefix, this.clock.now(), opts.limit + 1) as IterableIterator<
      Row & { size?: number }
    >;
    const out: KvEntry[] = [];
    for (const row of rows) {
      // Keys are in order, so the first key without the prefix ends the matches.
      if (!row.key.startsWith(opts.prefix)) break;
      const bytes = ITEM_OVERHEAD_BYTES + row.key.length + (row.size ?? 0);
      if (opts.budget !== undefined && !opts.budget.take(bytes)) break;
      out.push(toEntry(row, opts.values));
    }
    return out;
  }

  count(): number {
    return (this.stmts.count.get(this.clock.now()) as { n: number }).n;
  }

  private maybeSweep(now: number): void {
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.sweep(now);
  }

  /** Deletes expired rows, each recorded as an `expire` change (when it is removed, not when it expired). */
  private sweep(now: number): void {
    this.lastSweep = now;
    const gone = this.stmts.sweep.all(now) as { key: string; version: number }[];
    for (const row of gone) this.changes.append("expire", row.key, { version: row.version });
  }

  /**
   * Removes keys whose expiry passed, so a change-feed reader sees their `expire` entries now
   * rather than at the next write's sweep. Writes only when some key is due.
   */
  async expireDue(): Promise<void> {
    if (this.stmts.due.get(this.clock.now()) === undefined) return;
    await this.writes.run(() => this.sweep(this.clock.now()));
  }
}

/** A stored value's size in bytes (JSON text as UTF-8). */
function sizeOf(data: string | Buffer): number {
  return typeof data === "string" ? Buffer.byteLength(data) : data.length;
}

function checkVersion(key: string, expected: number | undefined, current: RowMeta | undefined): void {
  if (expected === undefined) return;
  const actual = current?.version ?? 0;
  if (actual !== expected) throw versionMismatch(key, expected, actual);
}

/** Prefixes an item error with its index (`items[3]: …`) and says what was kept. */
export function withIndex(err: unknown, index: number, outcome: string): unknown {
  if (!(err instanceof ServiceError)) return err;
  return new ServiceError(err.code, `items[${index}]: ${err.message}; ${outcome}`, { status: err.status });
}
