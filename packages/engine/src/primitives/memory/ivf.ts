// The IVF index's arithmetic (vectors.ts): centroids as one flat matrix, int8 quantisation of
// the probe's copies of the vectors, and k-means that can run in slices (ivf-maintenance.ts
// trains between writes, a few milliseconds at a time, never inside one).

/** Below this many vectors, recall compares the query with every (filtered) memory's vector. */
export const IVF_MIN_VECTORS = 20_000;
/** The centroids are trained again when the vectors reach this many times their training set. */
export const IVF_GROWTH = 4;
/** Vectors k-means is trained on at most (a deterministic sample: every k-th by seq). */
export const IVF_SAMPLE = 16_384;
/** ... and at most this many per list (k-means wants a few dozen points per centroid). */
export const IVF_SAMPLE_PER_LIST = 40;
/** Lloyd iterations of the k-means training. */
export const IVF_ITERATIONS = 8;
/** Lists probed per query: the nearest IVF_NPROBE centroids. */
export const IVF_NPROBE = 16;
/** Lists probed at most, as a multiple of nprobe, while the first hold too few that pass the filters. */
export const IVF_MAX_PROBE = 4;
/** Exact search scans at most this many filtered memories (the newest). */
export const EXACT_SCAN_LIMIT = 20_000;
/** Lists of one training at most; a training's lists are `bank × MAX_LISTS + i` (bank 0 or 1). */
export const MAX_LISTS = 4096;
/** An entry's key is `list × LIST_KEY + seq`: the entries table is ordered by (list, seq). */
export const LIST_KEY = 2 ** 40;

/** Lists: about √n, within [16, MAX_LISTS]. */
export function listCount(vectors: number): number {
  return Math.max(16, Math.min(MAX_LISTS, Math.round(Math.sqrt(vectors))));
}

/** Vectors sampled to train the lists of `vectors`. */
export function sampleSize(vectors: number): number {
  return Math.min(IVF_SAMPLE, IVF_SAMPLE_PER_LIST * listCount(vectors));
}

/** Bytes of an entry before its int8 code: the row's seq (uint48) and the scale (float32). */
export const ENTRY_HEADER = 10;

/**
 * A probe's copy of unit vector `v` of row `seq`, as one blob (one value per row read: the
 * probe's cost is per row): seq (uint48 LE), scale (float32 LE: max |v[i]| ÷ 127), then
 * `code[i]` = round(v[i] ÷ scale) as int8, so `code[i] × scale` ≈ `v[i]`.
 */
export function quantise(seq: number, v: Float32Array): Buffer {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i] as number));
  const scale = max / 127;
  const entry = Buffer.alloc(ENTRY_HEADER + v.length);
  entry.writeUIntLE(seq, 0, 6);
  entry.writeFloatLE(scale, 6);
  const code = new Int8Array(entry.buffer, entry.byteOffset + ENTRY_HEADER, v.length);
  if (scale > 0) for (let i = 0; i < v.length; i++) code[i] = Math.round((v[i] as number) / scale);
  return entry;
}

/** The seq of an entry's row. */
export function entrySeq(entry: Buffer): number {
  return entry.readUIntLE(0, 6);
}

/** `query · (code × scale)`: the dot product with the entry's quantised vector. */
export function approxDot(query: Float32Array, entry: Buffer): number {
  const c = new Int8Array(entry.buffer, entry.byteOffset + ENTRY_HEADER, entry.length - ENTRY_HEADER);
  let sum = 0;
  for (let i = 0; i < c.length; i++) sum += (query[i] as number) * (c[i] as number);
  return sum * entry.readFloatLE(6);
}

/** Centroids of one training, rows of a flat matrix; list `base + i` is centroid i's. */
export class Centroids {
  constructor(
    readonly matrix: Float32Array,
    readonly dims: number,
    readonly base: number,
  ) {}

  get count(): number {
    return this.dims === 0 ? 0 : this.matrix.length / this.dims;
  }

  /** The nearest centroid's list (among the lists `among` only, when given). */
  nearest(v: Float32Array, among?: readonly number[]): number {
    if (among === undefined) return this.base + nearestRow(this.matrix, this.dims, v, 0);
    let best = among[0] as number;
    let bestSim = Number.NEGATIVE_INFINITY;
    for (const list of among) {
      const sim = rowDot(this.matrix, (list - this.base) * this.dims, v, 0, this.dims);
      if (sim > bestSim) {
        bestSim = sim;
        best = list;
      }
    }
    return best;
  }

  /** Centroid of `list`. */
  centroid(list: number): Float32Array {
    const row = list - this.base;
    return this.matrix.subarray(row * this.dims, (row + 1) * this.dims);
  }

  /** The `count` nearest centroids' lists, nearest first. */
  nearestLists(v: Float32Array, count: number): number[] {
    const sims: { list: number; sim: number }[] = [];
    for (let c = 0; c < this.count; c++)
      sims.push({ list: this.base + c, sim: rowDot(this.matrix, c * this.dims, v, 0, this.dims) });
    sims.sort((a, b) => b.sim - a.sim || a.list - b.list);
    return sims.slice(0, count).map((s) => s.list);
  }
}

function rowDot(matrix: Float32Array, offset: number, v: Float32Array, vOffset: number, dims: number): number {
  let sum = 0;
  for (let d = 0; d < dims; d++) sum += (matrix[offset + d] as number) * (v[vOffset + d] as number);
  return sum;
}

/** Row of `matrix` nearest (largest dot) the vector at `v[vOffset…]`; the first among equals. */
function nearestRow(matrix: Float32Array, dims: number, v: Float32Array, vOffset: number): number {
  let best = 0;
  let bestSim = Number.NEGATIVE_INFINITY;
  const rows = matrix.length / dims;
  for (let c = 0; c < rows; c++) {
    const sim = rowDot(matrix, c * dims, v, vOffset, dims);
    if (sim > bestSim) {
      bestSim = sim;
      best = c;
    }
  }
  return best;
}

/**
 * Spherical k-means over `sample` (n points of `dims`, one flat array): `k` centroids seeded
 * with evenly spaced points, `iterations` Lloyd steps (each point to its nearest centroid, each
 * centroid the normalised mean of its points; an emptied one re-seeded with a point). `step`
 * works until a deadline and resumes where it stopped; the result does not depend on where the
 * slices fall. Deterministic.
 */
export class KMeansRun {
  readonly centroids: Float32Array;
  private readonly n: number;
  private readonly sums: Float64Array;
  private readonly counts: Int32Array;
  private iteration = 0;
  private point = 0;

  constructor(
    private readonly sample: Float32Array,
    private readonly dims: number,
    private readonly k: number,
    private readonly iterations: number,
  ) {
    this.n = dims === 0 ? 0 : sample.length / dims;
    this.centroids = new Float32Array(k * dims);
    const stride = this.n / k;
    for (let c = 0; c < k; c++) this.copyPoint(Math.floor(c * stride), c);
    this.sums = new Float64Array(k * dims);
    this.counts = new Int32Array(k);
  }

  get done(): boolean {
    return this.iteration >= this.iterations || this.n === 0;
  }

  /** Works until `deadline` (performance.now() ms) or the end; true when done. */
  step(deadline = Number.POSITIVE_INFINITY): boolean {
    const { dims, sample } = this;
    while (!this.done) {
      while (this.point < this.n) {
        const offset = this.point * dims;
        const c = nearestRow(this.centroids, dims, sample, offset);
        this.counts[c] = (this.counts[c] as number) + 1;
        const at = c * dims;
        for (let d = 0; d < dims; d++)
          this.sums[at + d] = (this.sums[at + d] as number) + (sample[offset + d] as number);
        this.point++;
        if ((this.point & 63) === 0 && performance.now() >= deadline) return false;
      }
      this.finishIteration();
    }
    return true;
  }

  private finishIteration(): void {
    const { dims } = this;
    for (let c = 0; c < this.k; c++) {
      const at = c * dims;
      if (this.counts[c] === 0) {
        this.copyPoint((c * 7919 + this.iteration) % this.n, c);
        continue;
      }
      let norm = 0;
      for (let d = 0; d < dims; d++) norm += (this.sums[at + d] as number) ** 2;
      const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let d = 0; d < dims; d++) this.centroids[at + d] = (this.sums[at + d] as number) * scale;
    }
    this.sums.fill(0);
    this.counts.fill(0);
    this.point = 0;
    this.iteration++;
  }

  private copyPoint(point: number, c: number): void {
    this.centroids.set(this.sample.subarray(point * this.dims, (point + 1) * this.dims), c * this.dims);
  }
}

/** k-means run to the end over separate points (see KMeansRun). */
export function kMeans(sample: readonly Float32Array[], k: number, iterations: number): Float32Array[] {
  if (k <= 0 || sample.length === 0) return [];
  const dims = (sample[0] as Float32Array).length;
  const flat = new Float32Array(sample.length * dims);
  sample.forEach((v, i) => {
    flat.set(v, i * dims);
  });
  const run = new KMeansRun(flat, dims, k, iterations);
  run.step();
  return Array.from({ length: k }, (_, c) => run.centroids.slice(c * dims, (c + 1) * dims));
}
