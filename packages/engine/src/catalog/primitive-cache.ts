import type { PrimitiveRecord } from "./catalog.js";

/**
 * Primitive records held in memory by a catalog (every request resolves its primitive). Reads
 * hand out copies, so a caller's change never reaches the cache; the catalog clears it on every
 * write it makes or hears of.
 */
export class PrimitiveCache {
  private readonly records = new Map<string, PrimitiveRecord>();

  get(id: string): PrimitiveRecord | undefined {
    const cached = this.records.get(id);
    return cached === undefined ? undefined : { ...cached };
  }

  /** Keeps `record` and answers a copy of it. */
  keep(record: PrimitiveRecord): PrimitiveRecord {
    this.records.set(record.id, record);
    return { ...record };
  }

  clear(): void {
    this.records.clear();
  }
}
