import type { AuditEntry } from "@prim/wire";
import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../core/clock.js";

/** Default audit retention: 30 days, as the cloud serves. */
export const AUDIT_RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Buffers audit entries and writes them in batches off the request path. A crash can lose
 * at most the last `flushMs` milliseconds of entries (default 10 ms); a clean shutdown and
 * every audit read flush first.
 */
export class AuditLog {
  private buffer: AuditEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly catalog: Catalog,
    private readonly flushMs = 10,
    private readonly onError: (err: unknown) => void = (err) => console.error("audit flush failed", err),
  ) {}

  record(entry: AuditEntry): void {
    this.buffer.push(entry);
    if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
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
    this.flushing = this.flushing.then(() => this.catalog.appendAudit(batch)).catch(this.onError);
    return this.flushing;
  }
}
