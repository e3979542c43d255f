import { notFound, type ObjectInfo, ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import type { ChangeLog } from "../changes/log.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS objects (
  key TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  content_type TEXT NOT NULL,
  metadata TEXT NOT NULL,
  body BLOB,          -- small objects inline
  blob TEXT,          -- larger ones: sha256 of a blob in the blob store
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS storage_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO storage_meta (name, value) VALUES ('sign_epoch', 0);
-- Uses of signed URLs with max_uses, by token hash; a row goes once its URL has expired.
CREATE TABLE IF NOT EXISTS signed_uses (id TEXT PRIMARY KEY, used INTEGER NOT NULL, expires_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS signed_uses_expiry ON signed_uses (expires_at);
`;

export interface ObjectRow {
  key: string;
  size: number;
  etag: string;
  content_type: string;
  metadata: string;
  blob: string | null;
  created_at: number;
  updated_at: number;
}

/** What a write stores: inline bytes or a blob reference, plus the object's headers. */
export interface NewObject {
  key: string;
  size: number;
  etag: string;
  contentType: string;
  metadata: Record<string, string>;
  body: Buffer | null;
  blob: string | null;
}

export interface WriteConditions {
  /** The current object's ETag must be this (`If-Match`). */
  ifMatch?: string | undefined;
  /** `If-None-Match: *`: the key must not exist. */
  ifNoneMatchAny?: boolean | undefined;
}

export function toInfo(row: ObjectRow): ObjectInfo {
  return {
    key: row.key,
    size: row.size,
    etag: row.etag,
    content_type: row.content_type,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** `If-Match` compares ETags with or without their quotes, and accepts a list. */
function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  const bare = etag.replace(/"/g, "");
  return header.split(",").some((t) => t.trim().replace(/^W\//, "").replace(/"/g, "") === bare);
}

export function checkConditions(current: ObjectRow | undefined, key: string, c: WriteConditions): void {
  if (c.ifNoneMatchAny && current !== undefined) {
    throw new ServiceError("precondition_failed", `object '${key}' already exists (If-None-Match: *)`);
  }
  if (c.ifMatch !== undefined && (current === undefined || !etagMatches(c.ifMatch, current.etag))) {
    throw new ServiceError("precondition_failed", `object '${key}' does not match If-Match ${c.ifMatch}`);
  }
}

export { etagMatches };

/** Object metadata (and small bodies) in the primitive's SQLite file. */
export class StorageStore {
  private readonly stmts;
  private readonly putTx: (obj: NewObject, c: WriteConditions) => ObjectRow;
  private readonly copyTx: (from: string, to: string, c: WriteConditions) => ObjectRow;
  private readonly deleteTx: (key: string, ifMatch: string | undefined) => boolean;

  constructor(
    db: Database.Database,
    private readonly clock: Clock,
    /** The primitive's change log: `put` (also a copy's target, with `from`) and `delete`. */
    private readonly changes: ChangeLog,
  ) {
    db.exec(SCHEMA);
    this.stmts = {
      head: db.prepare(
        "SELECT key, size, etag, content_type, metadata, blob, created_at, updated_at FROM objects WHERE key = ?",
      ),
      body: db.prepare("SELECT body FROM objects WHERE key = ?").pluck(),
      upsert: db.prepare(
        `INSERT INTO objects (key, size, etag, content_type, metadata, body, blob, created_at, updated_at)
         VALUES (@key, @size, @etag, @content_type, @metadata, @body, @blob, @created_at, @updated_at)
         ON CONFLICT (key) DO UPDATE SET size = excluded.size, etag = excluded.etag,
           content_type = excluded.content_type, metadata = excluded.metadata, body = excluded.body,
           blob = excluded.blob, updated_at = excluded.updated_at`,
      ),
      copy: db.prepare(
        `INSERT INTO objects (key, size, etag, content_type, metadata, body, blob, created_at, updated_at)
         SELECT @to, size, etag, content_type, metadata, body, blob, @now, @now FROM objects WHERE key = @from
         ON CONFLICT (key) DO UPDATE SET size = excluded.size, etag = excluded.etag,
           content_type = excluded.content_type, metadata = excluded.metadata, body = excluded.body,
           blob = excluded.blob, updated_at = excluded.updated_at`,
      ),
      delete: db.prepare("DELETE FROM objects WHERE key = ?"),
      list: db.prepare(
        `SELECT key, size, etag, content_type, metadata, blob, created_at, updated_at FROM objects
         WHERE key > ? AND key >= ? ORDER BY key LIMIT ?`,
      ),
      count: db.prepare("SELECT count(*) FROM objects").pluck(),
      blobBytes: db.prepare("SELECT coalesce(sum(size), 0) FROM objects WHERE blob IS NOT NULL").pluck(),
      blobRefs: db.prepare("SELECT DISTINCT blob FROM objects WHERE blob IS NOT NULL").pluck(),
      epoch: db.prepare("SELECT value FROM storage_meta WHERE name = 'sign_epoch'").pluck(),
      bumpEpoch: db
        .prepare("UPDATE storage_meta SET value = value + 1 WHERE name = 'sign_epoch' RETURNING value")
        .pluck(),
      takeUse: db
        .prepare(
          `INSERT INTO signed_uses (id, used, expires_at) VALUES (@id, 1, @expiresAt)
           ON CONFLICT (id) DO UPDATE SET used = used + 1 WHERE used < @max RETURNING used`,
        )
        .pluck(),
      giveUse: db.prepare("UPDATE signed_uses SET used = used - 1 WHERE id = ? AND used > 0"),
      expireUses: db.prepare("DELETE FROM signed_uses WHERE expires_at <= ?"),
      clearUses: db.prepare("DELETE FROM signed_uses"),
      raiseEpoch: db.prepare("UPDATE storage_meta SET value = max(value, ?) WHERE name = 'sign_epoch'"),
      usesKept: db.prepare("SELECT count(*) FROM signed_uses").pluck(),
    };
    this.putTx = db.transaction((obj: NewObject, c: WriteConditions) => {
      checkConditions(this.head(obj.key), obj.key, c);
      const now = this.clock.now();
      this.stmts.upsert.run({
        key: obj.key,
        size: obj.size,
        etag: obj.etag,
        content_type: obj.contentType,
        metadata: JSON.stringify(obj.metadata),
        body: obj.body,
        blob: obj.blob,
        created_at: now,
        updated_at: now,
      });
      this.changes.append("put", obj.key, { size: obj.size });
      return this.head(obj.key) as ObjectRow;
    });
    this.copyTx = db.transaction((from: string, to: string, c: WriteConditions) => {
      if (this.head(from) === undefined) throw notFound(`object '${from}'`);
      checkConditions(this.head(to), to, c);
      this.stmts.copy.run({ from, to, now: this.clock.now() });
      const row = this.head(to) as ObjectRow;
      this.changes.append("put", to, { size: row.size, extra: { from } });
      return row;
    });
    this.deleteTx = db.transaction((key: string, ifMatch: string | undefined) => {
      const current = this.head(key);
      if (ifMatch !== undefined) checkConditions(current, key, { ifMatch });
      if (current === undefined) return false;
      this.stmts.delete.run(key);
      this.changes.append("delete", key, { size: current.size });
      return current.blob !== null;
    });
  }

  head(key: string): ObjectRow | undefined {
    return this.stmts.head.get(key) as ObjectRow | undefined;
  }

  /** The inline body of an object stored inline. */
  inlineBody(key: string): Buffer {
    return (this.stmts.body.get(key) as Buffer | null) ?? Buffer.alloc(0);
  }

  /** Writes an object; the conditions are checked again here, atomically with the write. */
  put(obj: NewObject, conditions: WriteConditions): ObjectRow {
    return this.putTx(obj, conditions);
  }

  /** Copies by reference: the new key shares the blob (or the inline bytes). */
  copy(from: string, to: string, conditions: WriteConditions): ObjectRow {
    return this.copyTx(from, to, conditions);
  }

  /** Deletes; absent is fine. Returns whether a blob reference went away. */
  delete(key: string, ifMatch: string | undefined): boolean {
    return this.deleteTx(key, ifMatch);
  }

  /** Rows after `after` starting at `from`, in key order. */
  scan(after: string, from: string, limit: number): ObjectRow[] {
    return this.stmts.list.all(after, from, limit) as ObjectRow[];
  }

  count(): number {
    return this.stmts.count.get() as number;
  }

  /** Bytes held in the blob store on behalf of this store (inline bytes are in the file). */
  blobBytes(): number {
    return this.stmts.blobBytes.get() as number;
  }

  blobRefs(): string[] {
    return this.stmts.blobRefs.all() as string[];
  }

  signEpoch(): number {
    return this.stmts.epoch.get() as number;
  }

  /** Invalidates every signed URL issued so far (their use counts go with them). */
  revokeSigned(): number {
    this.stmts.clearUses.run();
    return this.stmts.bumpEpoch.get() as number;
  }

  /**
   * After a restore: an epoch past both the restored file's and `before` (the one in force until
   * then), so no URL signed before the restore works after it — neither one revoked since the
   * snapshot (its epoch came back with the file) nor one whose uses the file forgot.
   */
  revokeSignedAfterRestore(before: number): number {
    this.stmts.clearUses.run();
    this.stmts.raiseEpoch.run(before);
    return this.stmts.bumpEpoch.get() as number;
  }

  /**
   * Reserves one of a signed URL's `max` uses: false when all are taken (used or reserved by
   * requests in flight). One statement on the store's file, so concurrent requests — in this
   * process or forwarded from others to the cell that owns the file — cannot both take the
   * last use. Rows of expired URLs are deleted on the way.
   */
  takeSignedUse(id: string, max: number, expiresAt: number): boolean {
    this.stmts.expireUses.run(this.clock.now());
    return this.stmts.takeUse.get({ id, max, expiresAt }) !== undefined;
  }

  /** Gives back a use reserved by a request that then failed. */
  returnSignedUse(id: string): void {
    this.stmts.giveUse.run(id);
  }

  /** Use counts kept (tests: they do not outlive their URLs). */
  signedUseRows(): number {
    return this.stmts.usesKept.get() as number;
  }
}
