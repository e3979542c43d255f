// The IVF index's training and list moves, off the writes (vectors.ts): in bounded steps
// (STEP_MS of work each, through the store's group commit so a step's writes share a commit
// with whatever writes are waiting) scheduled one after another with setImmediate, so a
// `remember` waits at most one step, never a whole training.
//
// 1. sampling: every k-th vector by seq (at most IVF_SAMPLE), a batch of rows per step;
// 2. training: IVF_ITERATIONS Lloyd iterations of k-means over the sample, sliced (ivf.ts);
// 3. the centroids are written as the other bank's lists and become current: new vectors go to
//    them from then on, and a search probes both banks;
// 4. moving: each step moves a batch of entries off the old bank's lists into their nearest
//    current list (and gives vectors with no list yet theirs); when none is left, the old
//    centroids are deleted.
// Only the centroids and the entries are in the file: a step that was running when the file
// closed is started again from the file's state when it is opened (a training from its sample).
import type Database from "better-sqlite3";
import { decodeVector } from "./embedder.js";
import { type Centroids, IVF_ITERATIONS, KMeansRun, LIST_KEY, listCount, MAX_LISTS, sampleSize } from "./ivf.js";
import type { VectorIndex } from "./vectors.js";

/**
 * Work per step (ms): the time since the previous step ended (half the time goes to writes),
 * within [STEP_MS, MAX_STEP_MS]; a step may pass it by one row or one slice of 64 points.
 */
export const STEP_MS = 8;
export const MAX_STEP_MS = 100;
/**
 * A vector leaving an old list goes to the nearest of the MOVE_CANDIDATES current lists nearest
 * that list's centroid: its nearest list for 97.5% of vectors with the benchmark's stand-in
 * (64: 92%, 32: 84%), at 128 ÷ √n of a full comparison.
 */
export const MOVE_CANDIDATES = 128;
/** Rows read per query of a sampling step. */
const SAMPLE_BATCH = 512;
/** Entries moved per step at most (the step's budget usually stops it first). */
const BATCH = 2048;

type Phase =
  | { kind: "idle" }
  | {
      kind: "sampling";
      dims: number;
      total: number;
      every: number;
      size: number;
      /** Rows read so far: up to `after` (seq), of those up to `last` (the newest when it began). */
      after: number;
      last: number;
      seen: number;
      sample: Float32Array;
      n: number;
    }
  | { kind: "training"; dims: number; total: number; run: KMeansRun };

/** Runs one step in a write transaction; resolves to whether more work remains. */
export type StepRunner = (step: () => boolean) => Promise<boolean>;

export class IvfMaintenance {
  private readonly stmts;
  private phase: Phase = { kind: "idle" };
  private runner: StepRunner | undefined;
  private scheduled = false;
  private stopped = false;
  private lastStep = performance.now();
  /** For each old list, the current lists its vectors may go to (MOVE_CANDIDATES). */
  private readonly moveTo = new Map<number, number[]>();

  constructor(
    db: Database.Database,
    private readonly index: VectorIndex,
  ) {
    this.stmts = {
      newestDims: db
        .prepare("SELECT length(vector) / 4 FROM memories WHERE vector IS NOT NULL ORDER BY seq DESC LIMIT 1")
        .pluck(),
      batch: db.prepare(
        "SELECT seq, vector FROM memories WHERE vector IS NOT NULL AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
      ),
      lastSeq: db.prepare("SELECT max(seq) FROM memories").pluck(),
      unindexed: db.prepare(
        "SELECT seq, vector FROM memories INDEXED BY memories_unindexed WHERE vector IS NOT NULL AND ivf_list IS NULL ORDER BY seq LIMIT ?",
      ),
      anyUnindexed: db.prepare(
        "SELECT 1 FROM memories INDEXED BY memories_unindexed WHERE vector IS NOT NULL AND ivf_list IS NULL LIMIT 1",
      ),
      oldEntries: db
        .prepare("SELECT key FROM memory_ivf_entries WHERE key >= ? AND key < ? ORDER BY key LIMIT ?")
        .pluck(),
      clearBank: db.prepare("DELETE FROM memory_ivf WHERE list >= ? AND list < ?"),
      putCentroid: db.prepare("INSERT INTO memory_ivf (list, centroid) VALUES (?, ?)"),
      putState: db.prepare("INSERT OR REPLACE INTO memory_ivf_state (id, dims, trained_on, bank) VALUES (1, ?, ?, ?)"),
      unmarkOtherDims: db.prepare("UPDATE memories SET ivf_list = NULL WHERE ivf_list = -1"),
    };
  }

  /** Steps run through `runner` from now on, scheduled by themselves while work remains. */
  start(runner: StepRunner): void {
    this.runner = runner;
    this.stopped = false;
    this.kick();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Whether there is work: a training under way or due, vectors to move or to put in a list. */
  get pending(): boolean {
    if (this.phase.kind !== "idle" || this.index.old !== null) return true;
    if (this.index.trained && this.stmts.anyUnindexed.get() !== undefined) return true;
    return this.index.due;
  }

  /** Schedules the next step (after the current write), unless one is scheduled or none is due. */
  kick(): void {
    if (this.runner === undefined || this.stopped || this.scheduled || !this.pending) return;
    this.scheduled = true;
    // Unref'd: a process with nothing else to do exits; an unfinished training starts again
    // from the file's state when it is next opened.
    setImmediate(() => this.tick()).unref();
  }

  private tick(): void {
    const runner = this.runner;
    if (this.stopped || runner === undefined) {
      this.scheduled = false;
      return;
    }
    const budget = Math.min(MAX_STEP_MS, Math.max(STEP_MS, performance.now() - this.lastStep));
    runner(() => this.step(budget)).then(
      (more) => {
        this.scheduled = false;
        this.lastStep = performance.now();
        if (more) this.kick();
      },
      () => {
        // The step's transaction was rolled back (or the file closed): start again from the
        // file's state at the next write.
        this.scheduled = false;
        this.phase = { kind: "idle" };
        if (this.stopped) return;
        try {
          this.index.load();
        } catch {
          this.stopped = true; // the file is no longer readable: its next open starts again
        }
      },
    );
  }

  /** One bounded piece of work, inside the caller's transaction; true while more remains. */
  step(budgetMs = Number.POSITIVE_INFINITY): boolean {
    const deadline = performance.now() + budgetMs;
    const phase = this.phase;
    if (phase.kind === "sampling") return this.sample(phase, deadline);
    if (phase.kind === "training") {
      if (phase.run.step(deadline)) this.install(phase.dims, phase.total, phase.run);
      return true;
    }
    // Moves first: a new training starts once the previous one's lists are empty.
    if (this.index.trained && (this.index.old !== null || this.stmts.anyUnindexed.get() !== undefined)) {
      return this.move(deadline);
    }
    if (!this.index.due) return false;
    const dims = this.stmts.newestDims.get() as number | undefined;
    if (dims === undefined || dims === 0) return false;
    const total = this.index.vectors;
    const size = sampleSize(total);
    this.phase = {
      kind: "sampling",
      dims,
      total,
      every: Math.max(1, Math.floor(total / size)),
      size,
      after: 0,
      last: (this.stmts.lastSeq.get() as number | null) ?? 0,
      seen: 0,
      sample: new Float32Array(size * dims),
      n: 0,
    };
    return true;
  }

  private sample(phase: Extract<Phase, { kind: "sampling" }>, deadline: number): boolean {
    do {
      const rows = this.stmts.batch.all(phase.after, phase.last, SAMPLE_BATCH) as { seq: number; vector: Buffer }[];
      if (rows.length === 0) {
        const { dims, n, total } = phase;
        const points = phase.sample.subarray(0, n * dims);
        this.phase = {
          kind: "training",
          dims,
          total,
          run: new KMeansRun(points, dims, Math.min(listCount(total), n), IVF_ITERATIONS),
        };
        return true;
      }
      for (const row of rows) {
        if (phase.seen++ % phase.every !== 0 || phase.n >= phase.size) continue;
        const v = decodeVector(row.vector);
        if (v.length === phase.dims) phase.sample.set(v, phase.n++ * phase.dims);
      }
      phase.after = (rows[rows.length - 1] as { seq: number }).seq;
    } while (performance.now() < deadline);
    return true;
  }

  /** The trained centroids become the current lists (the other bank); the old ones stay until emptied. */
  private install(dims: number, total: number, run: KMeansRun): void {
    const bank = this.index.trained ? 1 - this.index.bank : 0;
    const base = bank * MAX_LISTS;
    this.stmts.clearBank.run(base, base + MAX_LISTS);
    const k = run.centroids.length / dims;
    for (let i = 0; i < k; i++) {
      const row = run.centroids.subarray(i * dims, (i + 1) * dims);
      this.stmts.putCentroid.run(base + i, Buffer.from(row.buffer, row.byteOffset, row.byteLength));
    }
    // Vectors set aside for another dimension may be of this one.
    if (this.index.trained && dims !== this.index.dims) this.stmts.unmarkOtherDims.run();
    this.stmts.putState.run(dims, total, bank);
    this.phase = { kind: "idle" };
    this.moveTo.clear();
    this.index.load();
  }

  /** The current lists nearest old list `list`'s centroid (same dimension only). */
  private candidates(old: Centroids, list: number): number[] | undefined {
    const current = this.index.current as Centroids;
    if (current.dims !== old.dims) return undefined;
    let lists = this.moveTo.get(list);
    if (lists === undefined) {
      lists = current.nearestLists(old.centroid(list), MOVE_CANDIDATES);
      this.moveTo.set(list, lists);
    }
    return lists;
  }

  /** Moves a batch off the old lists, else puts a batch of vectors with no list in theirs. */
  private move(deadline: number): boolean {
    const old = this.index.old;
    if (old !== null) {
      const low = old.base * LIST_KEY;
      const keys = this.stmts.oldEntries.all(low, low + MAX_LISTS * LIST_KEY, BATCH) as number[];
      if (keys.length === 0) {
        this.stmts.clearBank.run(old.base, old.base + MAX_LISTS);
        this.index.load();
        this.moveTo.clear();
        return true;
      }
      for (const key of keys) {
        const seq = key % LIST_KEY;
        this.index.stmts.deleteEntry.run(key);
        const vector = this.index.stmts.vectorOf.get(seq) as Buffer | null | undefined;
        if (vector === null || vector === undefined) this.index.stmts.setList.run(null, seq);
        else this.index.assign(seq, decodeVector(vector), this.candidates(old, (key - seq) / LIST_KEY));
        if (performance.now() >= deadline) break;
      }
      return true;
    }
    const rows = this.stmts.unindexed.all(BATCH) as { seq: number; vector: Buffer }[];
    for (const row of rows) {
      this.index.assign(row.seq, decodeVector(row.vector));
      if (performance.now() >= deadline) break;
    }
    return rows.length > 0;
  }
}
