import type { Catalog } from "../catalog/catalog.js";
import type { AuditEntry } from "../core/types.js";

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
