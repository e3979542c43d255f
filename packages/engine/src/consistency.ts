import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { PrimitiveRecord } from "./catalog/catalog.js";
import type { EngineServices } from "./primitives/services.js";

/**
 * What `prim admin fsck` reports for one workspace: the catalog, the primitives' files and
 * the blob store checked against each other, orphans named both ways. `ok` when every list
 * is empty.
 */
export interface ConsistencyReport {
  ok: boolean;
  primitives: number;
  snapshots: number;
  /** Catalog primitives whose file is missing. */
  missing_files: string[];
  /** Files under `primitives/` no catalog primitive owns (by id). */
  orphan_files: string[];
  /** Catalog snapshots whose file is missing (`<primitive>/<snapshot>`). */
  missing_snapshots: string[];
  /** Snapshot files no catalog snapshot owns. */
  orphan_snapshots: string[];
  blobs: {
    referenced: number;
    stored: number;
    /** Named by a primitive or snapshot, absent from the blob store. */
    missing: string[];
    /** In the blob store, named by nothing (the collector deletes these after its grace period). */
    orphans: string[];
  };
}

/** The file names a primitive may own in `primitives/`: its SQLite file, its journal, its aux dir. */
const OWNED = /^(?<id>[0-9a-z]{26})(\.sqlite(-wal|-shm|-journal)?|\.d)$/;
const SNAPSHOT_FILE = /^(?<id>.+)\.sqlite(-wal|-shm|-journal)?$/;

async function allPrimitives(services: EngineServices): Promise<PrimitiveRecord[]> {
  const all: PrimitiveRecord[] = [];
  for (let after: string | undefined; ; ) {
    const page = await services.catalog.listPrimitives({ after, limit: 500 });
    all.push(...page);
    if (page.length < 500) return all;
    after = page[page.length - 1]?.id;
  }
}

function entries(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Checks one workspace's catalog, files and blobs against each other (read only). */
export async function checkConsistency(services: EngineServices): Promise<ConsistencyReport> {
  const { files, catalog } = services;
  const primitives = await allPrimitives(services);
  const ids = new Set(primitives.map((p) => p.id));
  const primitivesDir = files.primitivesDir;
  const missing_files = primitives.filter((p) => !existsSync(files.path(p.id))).map((p) => p.id);
  const orphan_files = entries(primitivesDir).filter((name) => {
    const id = OWNED.exec(name)?.groups?.id;
    return id === undefined || !ids.has(id);
  });

  const referenced = await catalog.snapshotBlobRefs();
  let snapshots = 0;
  const missing_snapshots: string[] = [];
  const orphan_snapshots: string[] = [];
  const snapshotsRoot = files.snapshotsDir;
  for (const p of primitives) {
    const known = new Set<string>();
    for (let before: string | undefined; ; ) {
      const page = await catalog.listSnapshots(p.id, { before, limit: 500 });
      for (const s of page) known.add(s.id);
      if (page.length < 500) break;
      before = page[page.length - 1]?.id;
    }
    snapshots += known.size;
    const dir = files.snapshotDir(p.id);
    for (const id of known) if (!existsSync(join(dir, `${id}.sqlite`))) missing_snapshots.push(`${p.id}/${id}`);
    for (const name of entries(dir)) {
      const id = SNAPSHOT_FILE.exec(name)?.groups?.id;
      if (id === undefined || !known.has(id)) orphan_snapshots.push(`${p.id}/${name}`);
    }
    if (!missing_files.includes(p.id)) for (const hash of files.blobRefs(p.id, p.type)) referenced.add(hash);
  }
  for (const name of entries(snapshotsRoot)) if (!ids.has(name)) orphan_snapshots.push(`${name}/`);

  const stored = new Set<string>();
  for await (const blob of services.blobs.list()) stored.add(blob.hash);
  const blobs = {
    referenced: referenced.size,
    stored: stored.size,
    missing: [...referenced].filter((h) => !stored.has(h)).sort(),
    orphans: [...stored].filter((h) => !referenced.has(h)).sort(),
  };
  const lists = [missing_files, orphan_files, missing_snapshots, orphan_snapshots, blobs.missing, blobs.orphans];
  return {
    ok: lists.every((l) => l.length === 0),
    primitives: primitives.length,
    snapshots,
    missing_files,
    orphan_files: orphan_files.sort(),
    missing_snapshots,
    orphan_snapshots: orphan_snapshots.sort(),
    blobs,
  };
}
