import { randomBytes } from "node:crypto";
import type { SecretRequest, SecretRequestStatus } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";

export type { SecretRequest, SecretRequestStatus };

/** A request as its vault file holds it (the answers add the primitive's id). */
export type StoredRequest = Omit<SecretRequest, "primitive">;

/** How long a request waits for its human (then `expired`, unusable). */
export const SECRET_REQUEST_TTL_MS = 15 * 60_000;
/** Longest reason an agent may give, in characters. */
export const MAX_REASON_CHARS = 500;
/** Most requests pending at once in one vault (more: 409 `conflict` until some are answered). */
export const MAX_PENDING_REQUESTS = 100;
/** Answered and expired requests are kept this long (the page can still say what happened), then purged. */
export const ANSWERED_KEPT_MS = 24 * 60 * 60_000;
/** Request ids: `sreq_` + 128 random bits (base64url), unguessable: the page's address names one. */
export const SECRET_REQUEST_ID_RE = /^sreq_[A-Za-z0-9_-]{22}$/;

/**
 * Pending secret requests live in the vault's own file beside its secrets, never with a value:
 * the value a human types goes through `VaultStore.put` like any other.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS requests (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  reason TEXT NOT NULL,
  allow TEXT,
  status TEXT NOT NULL,
  requested_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  answered_at INTEGER,
  answered_by TEXT,
  version INTEGER
) WITHOUT ROWID;
`;

interface Row extends Omit<StoredRequest, "allow"> {
  allow: string | null;
}

interface Waiter {
  resolve(): void;
  cleanup(): void;
}

/**
 * A vault's secret requests and the calls waiting on them. A wait ends when the request is
 * answered (set or declined), when it expires (a clock timer, so a ManualClock test moves it), or
 * at the caller's own deadline: nothing polls.
 */
export class SecretRequests {
  private readonly stmts;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {
    db.exec(SCHEMA);
    this.stmts = {
      get: db.prepare("SELECT * FROM requests WHERE id = ?"),
      listPending: db.prepare(
        "SELECT * FROM requests WHERE status = 'pending' AND expires_at > ? ORDER BY created_at, id",
      ),
      insert: db.prepare(
        `INSERT INTO requests (id, name, reason, allow, status, requested_by, created_at, expires_at)
         VALUES (@id, @name, @reason, @allow, 'pending', @requested_by, @created_at, @expires_at)`,
      ),
      pending: db.prepare("SELECT count(*) FROM requests WHERE status = 'pending' AND expires_at > ?").pluck(),
      // Only a pending, unexpired request changes: an answer is given once.
      answer: db.prepare(
        `UPDATE requests SET status = @status, answered_at = @now, answered_by = @by, version = @version
         WHERE id = @id AND status = 'pending' AND expires_at > @now`,
      ),
      expire: db.prepare("UPDATE requests SET status = 'expired' WHERE status = 'pending' AND expires_at <= ?"),
      purge: db.prepare("DELETE FROM requests WHERE status != 'pending' AND coalesce(answered_at, expires_at) < ?"),
    };
  }

  /** A new pending request (old answered ones are purged first; too many pending is a 409 for the caller). */
  create(input: {
    name: string;
    reason: string;
    allow: SecretRequest["allow"];
    requested_by: string;
  }): StoredRequest | "full" {
    const now = this.clock.now();
    this.stmts.expire.run(now);
    this.stmts.purge.run(now - ANSWERED_KEPT_MS);
    if ((this.stmts.pending.get(now) as number) >= MAX_PENDING_REQUESTS) return "full";
    const id = `sreq_${randomBytes(16).toString("base64url")}`;
    const row = {
      id,
      name: input.name,
      reason: input.reason,
      allow: input.allow === null ? null : JSON.stringify(input.allow),
      requested_by: input.requested_by,
      created_at: now,
      expires_at: now + SECRET_REQUEST_TTL_MS,
    };
    this.stmts.insert.run(row);
    return this.get(id) as StoredRequest;
  }

  /** Every pending, unexpired request, oldest first (at most MAX_PENDING_REQUESTS). */
  pending(): StoredRequest[] {
    return (this.stmts.listPending.all(this.clock.now()) as Row[]).map((row) => ({
      ...row,
      allow: row.allow === null ? null : JSON.parse(row.allow),
    }));
  }

  /** The request as it stands now (a pending one past its expiry reads as `expired`); null if unknown. */
  get(id: string): StoredRequest | null {
    const row = this.stmts.get.get(id) as Row | undefined;
    if (row === undefined) return null;
    const request: StoredRequest = { ...row, allow: row.allow === null ? null : JSON.parse(row.allow) };
    if (request.status === "pending" && request.expires_at <= this.clock.now()) request.status = "expired";
    return request;
  }

  /**
   * Answers a pending request (in the caller's transaction with the secret's write); false when
   * it is not pending any more (answered, or expired): nothing changes then.
   */
  answer(id: string, status: "set" | "declined", by: string, version: number | null): boolean {
    const now = this.clock.now();
    return this.stmts.answer.run({ id, status, now, by, version }).changes === 1;
  }

  /** Runs `fn` in one transaction of the vault's file (an answer and the secret it stores). */
  atomically<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Wakes the calls waiting on `id` (after its answer committed). */
  answered(id: string): void {
    this.wake(id);
  }

  /**
   * The request once it is no longer pending, or as it stands after `waitMs` of real time (or
   * when `signal` aborts: the caller went away). Null if unknown.
   */
  async wait(id: string, waitMs: number, signal?: AbortSignal): Promise<StoredRequest | null> {
    const now = this.get(id);
    if (now === null || now.status !== "pending" || waitMs <= 0 || this.closed || signal?.aborted) return now;
    await new Promise<void>((resolve) => {
      const timers: (() => void)[] = [];
      const waiter: Waiter = {
        resolve: () => resolve(),
        cleanup: () => {
          for (const stop of timers) stop();
        },
      };
      const done = () => {
        const set = this.waiters.get(id);
        set?.delete(waiter);
        if (set?.size === 0) this.waiters.delete(id);
        waiter.cleanup();
        resolve();
      };
      const set = this.waiters.get(id) ?? new Set<Waiter>();
      this.waiters.set(id, set);
      set.add(waiter);
      const deadline = setTimeout(done, waitMs);
      timers.push(() => clearTimeout(deadline));
      signal?.addEventListener("abort", done, { once: true });
      timers.push(() => signal?.removeEventListener("abort", done));
      timers.push(this.clock.at(now.expires_at, done));
    });
    return this.get(id);
  }

  /** How many calls wait on `id` (tests wait for a parked call instead of sleeping). */
  waiting(id: string): number {
    return this.waiters.get(id)?.size ?? 0;
  }

  /** Ends every wait (the primitive is closing): each answers the request as it stands. */
  close(): void {
    this.closed = true;
    for (const id of [...this.waiters.keys()]) this.wake(id);
  }

  private wake(id: string): void {
    const set = this.waiters.get(id);
    if (set === undefined) return;
    this.waiters.delete(id);
    for (const waiter of set) {
      waiter.cleanup();
      waiter.resolve();
    }
  }
}

/** Whether a request's status is final (it will never change again). */
export const isFinal = (status: SecretRequestStatus) => status !== "pending";
