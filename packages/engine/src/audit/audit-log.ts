import type { AuditEntry } from "@prim/wire";
import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../core/clock.js";

/** Default audit retention: 30 days, as the cloud serves. */
export const AUDIT_RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/** Entries kept for a retry while the catalog cannot take them; past it the oldest go (logged). */
export const MAX_PENDING_AUDIT = 100_000;
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;

/**
 * Buffers audit entries and writes them in batches off the request path. A crash can lose
 * at most the last `flushMs` milliseconds of entries (default 10 ms); a clean shutdown and
 * every audit read flush first. A batch the catalog refuses (its database is down) goes back
 * to the front of the buffer and is retried with a backoff (250 ms doubling to 10 s), so an
 * outage delays entries instead of losing them.
 */
export class AuditLog {
  private buffer: AuditEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** The current retry delay while writes fail; 0 while they succeed. */
  private backoffMs = 0;
  private closed = false;

  constructor(
    private readonly catalog: Catalog,
    private readonly flushMs = 10,
    private readonly onError: (err: unknown) => void = (err) => console.error("audit flush failed", err),
  ) {}

  record(entry: AuditEntry): void {
    this.buffer.push(entry);
    this.schedule(this.backoffMs > 0 ? this.backoffMs : this.flushMs);
  }

  private schedule(ms: number): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => void this.flush(), ms);
    this.timer.unref();
  }

  private pruneTimer: NodeJS.Timeout | null = null;

  /**
   * Deletes entries older than `retentionMs` now (shortly after start) and every hour after.
   * `prune()` runs one pass and resolves with how many entries went.
   */
  keep(retentionMs: number, clock: Clock): void {
    const pass = () => void this.prune(retentionMs, clock).catch(this.onError);
    this.pruneTimer = setTimeout(pass, 1000);
    this.pruneTimer.unref();
    const every = setInterval(pass, PRUNE_EVERY_MS);
    every.unref();
    this.stopPruning = () => {
      if (this.pruneTimer !== null) clearTimeout(this.pruneTimer);
      clearInterval(every);
    };
  }

  prune(retentionMs: number, clock: Clock): Promise<number> {
    return this.catalog.pruneAudit(clock.now() - retentionMs);
  }

  stopPruning: () => void = () => {};

  /** Writes everything buffered so far; resolves once it is stored. */
  flush(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      try {
        await this.catalog.appendAudit(batch);
        this.backoffMs = 0;
      } catch (err) {
        this.onError(err);
        this.retryLater(batch);
      }
    });
    return this.flushing;
  }

  /** Writes what is buffered, once, and stops: nothing is retried after this. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopPruning();
    await this.flush();
  }

  /** Puts a refused batch back in front of newer entries and tries again after the backoff. */
  private retryLater(batch: AuditEntry[]): void {
    if (this.closed) {
      this.onError(new Error(`audit: ${batch.length} entries not written at shutdown`));
      return;
    }
    this.buffer = batch.concat(this.buffer);
    const over = this.buffer.length - MAX_PENDING_AUDIT;
    if (over > 0) {
      this.buffer.splice(0, over);
      this.onError(new Error(`audit: ${over} entries dropped; the catalog has refused writes for too long`));
    }
    this.backoffMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_FIRST_MS, this.backoffMs * 2));
    this.schedule(this.backoffMs);
  }
}
