import type { PrimitiveType } from "@prim/wire";
import type { Catalog } from "../catalog/catalog.js";
import { type Clock, systemClock } from "../core/clock.js";
import type { BlobStore } from "./blob-store.js";

/** Where the collector learns which blobs a primitive names (the tenant's open files). */
export interface BlobReferrers {
  blobRefs(id: string, type: PrimitiveType): Iterable<string>;
}

/**
 * Mark and sweep for the blob store: a blob that no primitive names (and that is older than a
 * grace period, so an upload between writing its blob and committing its row is safe) is
 * deleted. Runs a while after a write that may have dropped a reference.
 */
export class BlobCollector {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  /** Hashes kept whatever the catalog says (an import or export in progress), with counts. */
  private readonly pinned = new Map<string, number>();

  constructor(
    private readonly catalog: Catalog,
    private readonly files: BlobReferrers,
    private readonly blobs: BlobStore,
    /** The clock the blob store dates blobs with. */
    private readonly clock: Clock = systemClock,
    private readonly delayMs = 30_000,
  ) {}

  /** Asks for a collection soon; many requests in a row make one run. */
  schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.collect().catch((err) => console.error("blob collection failed", err));
    }, this.delayMs);
    this.timer.unref();
  }

  /** Deletes unreferenced blobs older than `graceMs`; returns how many. */
  collect(graceMs = 60_000): Promise<number> {
    this.running ??= this.sweep(graceMs).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * Keeps `hashes` until the returned function is called, named or not (an import holds the
   * blobs it wrote until the primitives naming them are in the catalog; an export the blobs
   * its copies name until they are written out).
   */
  pin(hashes: Iterable<string>): () => void {
    const list = [...hashes];
    for (const hash of list) this.pinned.set(hash, (this.pinned.get(hash) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const hash of list) {
        const left = (this.pinned.get(hash) ?? 1) - 1;
        if (left === 0) this.pinned.delete(hash);
        else this.pinned.set(hash, left);
      }
    };
  }

  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private async sweep(graceMs: number): Promise<number> {
    // Snapshots' blobs first: a restore between the two reads moves names from a snapshot
    // into a live file, never the other way.
    const referenced = await this.catalog.snapshotBlobRefs();
    for (const hash of this.pinned.keys()) referenced.add(hash);
    let after: string | undefined;
    for (;;) {
      const page = await this.catalog.listPrimitives({ after, limit: 500 });
      for (const p of page) for (const hash of this.files.blobRefs(p.id, p.type)) referenced.add(hash);
      if (page.length < 500) break;
      after = page[page.length - 1]?.id;
    }
    const cutoff = this.clock.now() - graceMs;
    let deleted = 0;
    for await (const blob of this.blobs.list()) {
      if (referenced.has(blob.hash) || blob.mtimeMs > cutoff) continue;
      await this.blobs.delete(blob.hash);
      deleted++;
    }
    return deleted;
  }
}
