// Recall's vector signal: the memories nearest a query vector, exactly on small stores and
// through an IVF index (inverted file: k-means centroids, each vector in its nearest centroid's
// list) once there are IVF_MIN_VECTORS vectors.
//
// - `memories.vector`: the memory's unit-length float32 vector (embedder.ts), as before.
// - `memory_ivf_entries`: the probe's copy of each indexed vector, one blob (ivf.ts: seq, scale, int8),
//   keyed `list × 2^40 + seq`, so one list's entries are one range of the table's b-tree: a
//   probe reads contiguous pages, never a `memories` row.
// - `memories.ivf_list`: the list the vector's entry is in; NULL: no entry yet (not trained, or
//   not yet assigned: such vectors are compared exactly by every search, through the partial
//   index `memories_unindexed`); -1: another dimension than the index's (exact path only).
//   Triggers remove the entry when the row is deleted or its vector changes.
// - `memory_ivf`: one row per list, its centroid (unit float32). Lists of one training are
//   `bank × 4096 + i`; while a new training's lists take over (ivf-maintenance.ts), both banks'
//   lists are probed. `memory_ivf_state`: dimension, vectors trained on, the current bank.
// Writes put a new vector in its nearest current list, in the write's own transaction. Training
// and moving vectors to new lists happen in bounded steps between writes (ivf-maintenance.ts).
// A probe scores its lists' int8 entries, then checks the best against `memories` with recall's
// filters (filter.ts: tombstones, past rows, as_of, kinds, tags, owner, times) and re-ranks
// them with the float32 vector.
import type Database from "better-sqlite3";
import { decodeVector, dot } from "./embedder.js";
import { type SqlFilter, StatementCache, sqlFilter } from "./filter.js";
import {
  approxDot,
  Centroids,
  ENTRY_HEADER,
  EXACT_SCAN_LIMIT,
  entrySeq,
  IVF_GROWTH,
  IVF_MAX_PROBE,
  IVF_MIN_VECTORS,
  IVF_NPROBE,
  LIST_KEY,
  MAX_LISTS,
  quantise,
} from "./ivf.js";
import { IvfMaintenance } from "./ivf-maintenance.js";
import { migrateVectorIndex } from "./migrate.js";

export {
  EXACT_SCAN_LIMIT,
  IVF_GROWTH,
  IVF_ITERATIONS,
  IVF_MAX_PROBE,
  IVF_MIN_VECTORS,
  IVF_NPROBE,
  IVF_SAMPLE,
  kMeans,
  listCount,
} from "./ivf.js";

/** Candidates re-ranked with the float32 vector: the best max(2n, n + RERANK_EXTRA) by int8. */
export const RERANK_EXTRA = 50;
/** An int8 dot product this far below 0 is no candidate (the rounding moves it by ~0.001). */
const APPROX_MARGIN = 0.02;

export const VECTOR_INDEX_SCHEMA = `
CREATE TABLE IF NOT EXISTS memory_ivf (list INTEGER PRIMARY KEY, centroid BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS memory_ivf_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  dims INTEGER NOT NULL,
  trained_on INTEGER NOT NULL,
  bank INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS memory_ivf_entries (key INTEGER PRIMARY KEY, entry BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS memories_with_vector ON memories (seq) WHERE vector IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_unindexed ON memories (seq) WHERE vector IS NOT NULL AND ivf_list IS NULL;
CREATE TRIGGER IF NOT EXISTS memories_ivf_after_delete AFTER DELETE ON memories WHEN old.ivf_list >= 0 BEGIN
  DELETE FROM memory_ivf_entries WHERE key = old.ivf_list * ${LIST_KEY} + old.seq;
END;
CREATE TRIGGER IF NOT EXISTS memories_ivf_after_vector AFTER UPDATE OF vector ON memories BEGIN
  DELETE FROM memory_ivf_entries WHERE key = old.ivf_list * ${LIST_KEY} + old.seq;
  UPDATE memories SET ivf_list = NULL WHERE seq = new.seq AND ivf_list IS NOT NULL;
END;
`;

export interface VectorIndexOptions {
  /** Vectors before the IVF is trained (default IVF_MIN_VECTORS; tests use fewer). */
  minVectors?: number;
  nprobe?: number;
  /** Whether the store runs training and list moves by itself (default); tests step them. */
  background?: boolean;
}

type IndexStatement = "setList" | "putEntry" | "deleteEntry" | "entries" | "vectorOf" | "count" | "state" | "centroids";

export class VectorIndex {
  readonly stmts: Record<IndexStatement, Database.Statement>;
  readonly maintenance: IvfMaintenance;
  private readonly minVectors: number;
  private readonly nprobe: number;
  /** The current training's lists, and the previous one's while vectors move off them. */
  current: Centroids | null = null;
  old: Centroids | null = null;
  dims = 0;
  trainedOn = 0;
  bank = 0;
  /** Vectors stored (counted at open, then kept in step by `add`; purges are not subtracted). */
  vectors: number;

  constructor(
    db: Database.Database,
    private readonly cache: StatementCache,
    options: VectorIndexOptions = {},
  ) {
    this.minVectors = options.minVectors ?? IVF_MIN_VECTORS;
    this.nprobe = options.nprobe ?? IVF_NPROBE;
    migrateVectorIndex(db);
    db.exec(VECTOR_INDEX_SCHEMA);
    this.stmts = {
      setList: db.prepare("UPDATE memories SET ivf_list = ? WHERE seq = ?"),
      putEntry: db.prepare("INSERT OR REPLACE INTO memory_ivf_entries (key, entry) VALUES (?, ?)"),
      deleteEntry: db.prepare("DELETE FROM memory_ivf_entries WHERE key = ?"),
      entries: db.prepare("SELECT entry FROM memory_ivf_entries WHERE key >= ? AND key < ?").pluck(),
      vectorOf: db.prepare("SELECT vector FROM memories WHERE seq = ?").pluck(),
      count: db.prepare("SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL"),
      state: db.prepare("SELECT dims, trained_on, bank FROM memory_ivf_state WHERE id = 1"),
      centroids: db.prepare("SELECT list, centroid FROM memory_ivf ORDER BY list"),
    };
    this.vectors = (this.stmts.count.get() as { n: number }).n;
    this.load();
    this.maintenance = new IvfMaintenance(db, this);
  }

  /** Reads the trained state (centroids of both banks) from the file. */
  load(): void {
    const state = this.stmts.state.get() as { dims: number; trained_on: number; bank: number } | undefined;
    this.current = null;
    this.old = null;
    if (state === undefined) return;
    this.dims = state.dims;
    this.trainedOn = state.trained_on;
    this.bank = state.bank;
    const banks: [number[], Buffer[]][] = [
      [[], []],
      [[], []],
    ];
    for (const row of this.stmts.centroids.all() as { list: number; centroid: Buffer }[]) {
      const bank = banks[Math.floor(row.list / MAX_LISTS)] as [number[], Buffer[]];
      bank[0].push(row.list);
      bank[1].push(row.centroid);
    }
    const centroids = (bank: number) => {
      const [, blobs] = banks[bank] as [number[], Buffer[]];
      if (blobs.length === 0) return null;
      const dims = (blobs[0] as Buffer).length / 4;
      const matrix = new Float32Array(blobs.length * dims);
      blobs.forEach((b, i) => {
        matrix.set(decodeVector(b), i * dims);
      });
      return new Centroids(matrix, dims, bank * MAX_LISTS);
    };
    this.current = centroids(this.bank);
    this.old = centroids(1 - this.bank);
  }

  get trained(): boolean {
    return this.current !== null;
  }

  /** Whether the vectors call for a (new) training: IVF_MIN_VECTORS, then IVF_GROWTH × the last. */
  get due(): boolean {
    return this.trained ? this.vectors >= IVF_GROWTH * this.trainedOn : this.vectors >= this.minVectors;
  }

  /**
   * Row `seq` now has `vector` (or none): put in its nearest list, inside the caller's
   * transaction (the trigger has removed an entry of a previous vector). A training that
   * becomes due starts after the write (ivf-maintenance.ts), never inside it.
   */
  add(seq: number, vector: Buffer | null): void {
    if (vector === null) return;
    this.vectors++;
    if (this.trained) this.assign(seq, decodeVector(vector));
    if (this.due) this.maintenance.kick();
  }

  /**
   * Row `seq`'s entry in its nearest current list, or the nearest of `among` (-1 when of
   * another dimension).
   */
  assign(seq: number, v: Float32Array, among?: readonly number[]): void {
    const current = this.current as Centroids;
    if (v.length !== current.dims) {
      this.stmts.setList.run(-1, seq);
      return;
    }
    const list = current.nearest(v, among);
    this.stmts.putEntry.run(list * LIST_KEY + seq, quantise(seq, v));
    this.stmts.setList.run(list, seq);
  }

  /**
   * The `n` memories passing `filter` nearest `query` (unit float32), best first. Trained: the
   * nearest `nprobe` lists (of each bank while a new training takes over) are scored by their
   * int8 entries; the best are checked against the filters and re-ranked by their float32
   * vector, with the vectors not yet in a list compared exactly (the newest EXACT_SCAN_LIMIT of
   * them, as the exact path). While fewer than `n` pass, as
   * many more lists are probed, up to IVF_MAX_PROBE × nprobe; then exactly over the filtered
   * memories, unless every list was probed. Not trained: exactly.
   */
  search(query: Float32Array, filter: SqlFilter, n: number): number[] {
    const current = this.current;
    if (current === null || query.length !== current.dims) return this.exact(query, filter, n);
    const banks = [current, ...(this.old === null ? [] : [this.old])].filter((c) => c.dims === query.length);
    const limit = IVF_MAX_PROBE * this.nprobe;
    const orders = banks.map((c) => c.nearestLists(query, Math.min(c.count, limit)));
    const lists = banks.reduce((sum, c) => sum + c.count, 0);
    const where = filter.sql === "" ? "" : ` AND ${filter.sql}`;
    const unindexed = `SELECT m.seq AS seq, m.vector AS vector FROM memories m INDEXED BY memories_unindexed
      WHERE m.vector IS NOT NULL AND m.ivf_list IS NULL${where} ORDER BY m.seq DESC LIMIT ${EXACT_SCAN_LIMIT}`;
    const check = `SELECT m.seq AS seq, m.vector AS vector FROM memories m
      WHERE m.seq IN (SELECT value FROM json_each(@seqs))${where}`;
    const scored: Scored[] = [];
    // Rows that passed the filters (whatever their similarity): the filter's share decides
    // whether more lists, or the exact path, can find more.
    let passed = score(this.cache.get(unindexed).iterate(filter.params) as Iterable<Scan>, query, scored);
    const fromUnindexed = scored.length;
    const pool = Math.max(2 * n, n + RERANK_EXTRA);
    let candidates: Scored[] = [];
    let probed = 0;
    let probedLists = 0;
    while (probed < limit) {
      const take = Math.max(this.nprobe, probed);
      for (const order of orders) {
        for (const list of order.slice(probed, probed + take)) {
          probedLists++;
          this.approx(list, query, candidates);
        }
      }
      probed += take;
      // The best by int8 first, in batches, until `pool` of them pass the filters.
      candidates.sort((a, b) => b.sim - a.sim || b.seq - a.seq);
      let at = 0;
      while (at < candidates.length && scored.length - fromUnindexed < pool) {
        const batch = candidates.slice(at, at + pool - (scored.length - fromUnindexed) + 8);
        at += batch.length;
        const seqs = JSON.stringify(batch.map((c) => c.seq));
        passed += score(this.cache.get(check).iterate({ ...filter.params, seqs }) as Iterable<Scan>, query, scored);
      }
      candidates = candidates.slice(at);
      if (passed >= n || probedLists >= lists) break;
    }
    // A narrow filter can leave even those short: then the filtered memories are few enough
    // (or the newest EXACT_SCAN_LIMIT of them) to compare with each.
    if (passed < n && probedLists < lists) return this.exact(query, filter, n);
    return best(scored, n);
  }

  /** Adds the entries of `list` with their int8 dot product to `out`. */
  private approx(list: number, query: Float32Array, out: Scored[]): void {
    const low = list * LIST_KEY;
    // all(): one call for the list's rows (iterate() pays a call per row).
    for (const entry of this.stmts.entries.all(low, low + LIST_KEY) as Buffer[]) {
      if (entry.length - ENTRY_HEADER !== query.length) continue;
      const sim = approxDot(query, entry);
      // Cosine ≤ 0 is no candidate (score()); the margin covers the int8 rounding.
      if (sim > -APPROX_MARGIN) out.push({ seq: entrySeq(entry), sim });
    }
  }

  /**
   * The `n` nearest by comparing with each of the newest `scan` filtered vectors (all of them
   * with -1).
   */
  exact(query: Float32Array, filter: SqlFilter, n: number, scan = EXACT_SCAN_LIMIT): number[] {
    const where = filter.sql === "" ? "m.vector IS NOT NULL" : `m.vector IS NOT NULL AND ${filter.sql}`;
    const sql = `SELECT m.seq AS seq, m.vector AS vector FROM memories m WHERE ${where} ORDER BY m.seq DESC LIMIT @n`;
    const rows = this.cache.get(sql).iterate({ ...filter.params, n: scan }) as Iterable<Scan>;
    const scored: Scored[] = [];
    score(rows, query, scored);
    return best(scored, n);
  }
}

/**
 * A memory file's vector index opened outside its store, over the live memories: the
 * benchmark compares the IVF with exact search through it.
 */
export function openVectorIndex(db: Database.Database, options: VectorIndexOptions = {}) {
  const index = new VectorIndex(db, new StatementCache(db), options);
  const live = sqlFilter({ includeSuperseded: false });
  return {
    trained: index.trained,
    search: (query: Float32Array, n: number) => index.search(query, live, n),
    /** Every live vector compared: the true nearest. */
    exact: (query: Float32Array, n: number) => index.exact(query, live, n, -1),
  };
}

interface Scan {
  seq: number;
  vector: Buffer;
}

interface Scored {
  seq: number;
  sim: number;
}

/**
 * Adds each row's dot product with `query` to `scored`. A vector at a right angle or more to
 * the query (cosine ≤ 0) shares no direction with it and is no candidate. Returns the rows of
 * the query's dimension.
 */
function score(rows: Iterable<Scan>, query: Float32Array, scored: Scored[]): number {
  let read = 0;
  for (const row of rows) {
    const v = decodeVector(row.vector);
    if (v.length !== query.length) continue;
    read++;
    const sim = dot(query, v);
    if (sim > 0) scored.push({ seq: row.seq, sim });
  }
  return read;
}

/** The best `n`, best first (newer first among equals). */
function best(scored: Scored[], n: number): number[] {
  scored.sort((a, b) => b.sim - a.sim || b.seq - a.seq);
  return scored.slice(0, n).map((s) => s.seq);
}
