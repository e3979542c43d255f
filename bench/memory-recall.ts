// memory recall benchmark: ranking quality of the memory primitive's recall on two labelled
// sets (bench/data/memory-recall.json, and the harder memory-recall-hard.json over the same
// memories plus near-duplicates), against SQLite FTS5 BM25 and a per-word substring baseline
// on the same texts, and recall latency with 100,000 memories in the store. Runs the engine in this process (its
// build, `packages/engine/dist`: run `npm run build` after changing it) and calls it through `engine.invoke`.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Engine, LOCAL_PRINCIPAL, ManualClock, type PrimitiveInfo } from "@prim/engine";
import {
  fillerTexts,
  fts5Baseline,
  type LabelledMemory,
  type LabelledQuery,
  type LabelledSet,
  loadHardSet,
  loadLabelledSet,
  percentile,
  prng,
  type Scores,
  score,
  shuffle,
  wordSubstringBaseline,
} from "./lib/memory-corpus.js";
import { vectorIndexRun } from "./lib/memory-vectors.js";
import { printRatio } from "./lib/verdict.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
/** Recall@5 of memory.recall on the standard set, as a share (not a ratio to a peer). */
const TARGET_RECALL_AT_5 = 0.85;
/**
 * Targets of memory.recall over each peer, on both sets. Recall is sold as better than what a
 * user builds in ten minutes, so it must not lose on any metric (1.00) and must beat both peers
 * on MRR by more than one query's worth (1.05: one query moves MRR by ~1.5 %). Set before the
 * hard set was first run, and not to be moved to fit a result.
 */
const PEER_TARGETS = { recall_at1: 1.0, recall_at5: 1.0, mrr: 1.05 } as const;
/**
 * Issue 44's scale targets, fixed before the first 100k/1M run with them (and not to be moved
 * to fit a result): recall@5 of the standard set's queries with the labelled memories hidden
 * among 100,000 (0.60 when set); recall p99 at each size (printed as target ÷ p99, ≥ 1); and,
 * on the hard set, recall@5 at least FTS5's on every query class (a class where both score 0
 * counts as equal, 1.00).
 */
const SCALE_TARGETS = {
  recallAt5Among: new Map<number, number>([[100_000, 0.85]]),
  p99Ms: new Map<number, number>([
    [100_000, 50],
    [1_000_000, 200],
  ]),
  hardClassVsFts5: 1.0,
} as const;
const METRICS = [
  ["recall_at1", "recallAt1"],
  ["recall_at5", "recallAt5"],
  ["mrr", "mrr"],
] as const;
// biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
const LATENCY_MEMORIES = Number(process.env.BENCH_MEMORIES ?? 100_000);
/** `BENCH_MEMORY_MILLION=1` adds a run among 1,000,000 memories (several minutes: see README). */
// biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
const MILLION = process.env.BENCH_MEMORY_MILLION === "1";
/** `BENCH_MEMORY_VECTORS=0` skips the vector index run (100k memories with the hashing embedder). */
// biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
const VECTORS = process.env.BENCH_MEMORY_VECTORS !== "0";
const LATENCY_PASSES = 3;
const INSERT_CHUNK = 1000;

interface Recalled {
  data: { id: string }[];
}

async function createMemory(engine: Engine, name: string): Promise<string> {
  const p = await engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name,
    type: "memory",
    group: "bench",
  });
  return p.id;
}

/** Remembers the memories in order (a minute apart); returns engine id → dataset id. */
async function remember(
  engine: Engine,
  clock: ManualClock,
  primitive: string,
  memories: readonly LabelledMemory[],
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < memories.length; i += INSERT_CHUNK) {
    const chunk = memories.slice(i, i + INSERT_CHUNK);
    // Concurrent calls share group commits, as concurrent clients would.
    const records = await Promise.all(
      chunk.map((m) => {
        clock.advance(60_000);
        const input = { kind: m.kind, text: m.text, tags: m.tags, ...(m.owner ? { owner: m.owner } : {}) };
        return engine.invoke<{ id: string }>(LOCAL_PRINCIPAL, "memory.remember", primitive, input);
      }),
    );
    records.forEach((r, k) => {
      ids.set(r.id, (chunk[k] as LabelledMemory).id);
    });
  }
  return ids;
}

async function recallRankings(
  engine: Engine,
  primitive: string,
  queries: readonly LabelledQuery[],
  ids: ReadonlyMap<string, string>,
  latencies?: number[],
): Promise<string[][]> {
  const out: string[][] = [];
  for (const q of queries) {
    const start = performance.now();
    const res = await engine.invoke<Recalled>(LOCAL_PRINCIPAL, "memory.recall", primitive, {
      query: q.query,
      limit: 10,
    });
    latencies?.push(performance.now() - start);
    out.push(res.data.map((m) => ids.get(m.id) ?? m.id));
  }
  return out;
}

function byType(rankings: string[][], queries: readonly LabelledQuery[]): Map<string, Scores> {
  const types = [...new Set(queries.map((q) => q.type))];
  return new Map(
    types.map((t) => {
      const idx = queries.flatMap((q, i) => (q.type === t ? [i] : []));
      return [
        t,
        score(
          idx.map((i) => rankings[i] as string[]),
          idx.map((i) => queries[i] as LabelledQuery),
        ),
      ];
    }),
  );
}

interface QualityRow {
  name: string;
  all: Scores;
  types: Map<string, Scores>;
}

function printQuality(set: string, rows: QualityRow[], types: string[]): void {
  const head = ["ranking".padEnd(14), "  r@1", "  r@5", "  MRR", ...types.map((t) => `${t} r@1/r@5/MRR`.padStart(28))];
  console.log(`\n${set} set\n${head.join("  ")}`);
  for (const r of rows) {
    const cells = [r.name.padEnd(14), ...[r.all.recallAt1, r.all.recallAt5, r.all.mrr].map((x) => x.toFixed(3))];
    for (const t of types) {
      const s = r.types.get(t);
      const text = s === undefined ? "-" : [s.recallAt1, s.recallAt5, s.mrr].map((x) => x.toFixed(2)).join(" / ");
      cells.push(text.padStart(28));
    }
    console.log(cells.join("  "));
  }
}

/** Quality on one labelled set: engine recall and both peers, same texts, same order. */
async function qualityRun(
  engine: Engine,
  clock: ManualClock,
  set: string,
  memories: LabelledMemory[],
  queries: LabelledQuery[],
): Promise<QualityRow[]> {
  const primitive = await createMemory(engine, `labelled-${set}`);
  const ids = await remember(engine, clock, primitive, memories);
  const engineRanks = await recallRankings(engine, primitive, queries, ids);
  const fts5 = fts5Baseline(memories);
  const fts5Ranks = queries.map((q) => fts5.rank(q.query, 10));
  fts5.close();
  const wordRanks = queries.map((q) => wordSubstringBaseline(memories, q.query, 10));
  const types = [...new Set(queries.map((q) => q.type))];
  const rows = [
    { name: "memory_recall", ranks: engineRanks },
    { name: "fts5_bm25", ranks: fts5Ranks },
    { name: "baseline_words", ranks: wordRanks },
  ].map((r) => ({ name: r.name, all: score(r.ranks, queries), types: byType(r.ranks, queries) }));
  printQuality(set, rows, types);
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  if (process.env.BENCH_VERBOSE) {
    queries.forEach((q, i) => {
      const got = (engineRanks[i] as string[]).slice(0, 5);
      const peer = (fts5Ranks[i] as string[]).slice(0, 5);
      if (!q.expected.some((id) => got.includes(id))) {
        console.log(`miss (${q.type}): ${q.query} → ${got.join(", ")} (fts5: ${peer.join(", ")})`);
      }
    });
  }
  return rows;
}

/** RESULT lines of a set, then RATIO lines of memory.recall against each peer. */
function printSetResults(set: string, rows: QualityRow[]): void {
  for (const r of rows) {
    for (const [metric, key] of METRICS)
      console.log(`RESULT ${r.name}_${metric}_${set} ${r.all[key].toFixed(3)} ratio`);
  }
  const [mem, ...peers] = rows as [QualityRow, ...QualityRow[]];
  for (const peer of peers) {
    for (const [metric, key] of METRICS) {
      printRatio(`memory_${metric}_vs_${peer.name}_${set}`, mem.all[key] / peer.all[key], PEER_TARGETS[metric]);
    }
  }
}

/** Latency (and, informationally, quality) with the labelled set hidden among filler memories. */
async function latencyRun(
  engine: Engine,
  clock: ManualClock,
  memories: LabelledMemory[],
  queries: LabelledQuery[],
  size: number,
) {
  const primitive = await createMemory(engine, `large-${size}`);
  const random = prng(7);
  const filler = fillerTexts(memories, Math.max(0, size - memories.length), 11).map(
    (text, i): LabelledMemory => ({ id: `filler-${i}`, kind: random() < 0.7 ? "fact" : "episode", text, tags: [] }),
  );
  const all = shuffle([...filler, ...memories], random);
  const start = performance.now();
  const ids = await remember(engine, clock, primitive, all);
  const insertSeconds = (performance.now() - start) / 1000;
  const latencies: number[] = [];
  let rankings: string[][] = [];
  for (let pass = 0; pass < LATENCY_PASSES; pass++) {
    rankings = await recallRankings(engine, primitive, queries, ids, pass === 0 ? undefined : latencies);
  }
  latencies.sort((a, b) => a - b);
  const path = engine.services.files.path(primitive);
  let bytes = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      bytes += statSync(`${path}${suffix}`).size;
    } catch {
      // no WAL file: nothing to add
    }
  }
  const quality = score(rankings, queries);
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  if (process.env.BENCH_VERBOSE) {
    queries.forEach((q, i) => {
      const got = (rankings[i] as string[]).slice(0, 5);
      if (!q.expected.every((id) => got.includes(id)))
        console.log(`miss among ${size} (${q.type}): ${q.query} → ${got}`);
    });
  }
  return { count: all.length, insertRate: all.length / insertSeconds, latencies, quality, bytes };
}

/** A ratio where a zero denominator means "no worse" when both are 0 (capped at 9.99). */
function ratioOf(value: number, peer: number): number {
  if (peer === 0) return value === 0 ? 1 : 9.99;
  return Math.min(9.99, value / peer);
}

function printLarge(large: Awaited<ReturnType<typeof latencyRun>>): void {
  const n = large.count;
  const p99 = percentile(large.latencies, 0.99);
  console.log(`\n${n} memories: ${large.latencies.length} recalls measured\n`);
  console.log(`RESULT memory_recall_p50_${n} ${percentile(large.latencies, 0.5).toFixed(2)} ms`);
  console.log(`RESULT memory_recall_p99_${n} ${p99.toFixed(2)} ms`);
  console.log(`RESULT memory_remember_rate_${n} ${large.insertRate.toFixed(0)} memories/s`);
  console.log(`RESULT memory_file_bytes_per_memory_${n} ${(large.bytes / n).toFixed(0)} bytes`);
  console.log(`RESULT memory_recall_at5_among_${n} ${large.quality.recallAt5.toFixed(3)} ratio`);
  console.log(`RESULT memory_mrr_among_${n} ${large.quality.mrr.toFixed(3)} ratio`);
  printRatio(`memory_recall_at5_among_${n}`, large.quality.recallAt5, SCALE_TARGETS.recallAt5Among.get(n) ?? null);
  const p99Target = SCALE_TARGETS.p99Ms.get(n);
  printRatio(`memory_recall_p99_target_over_p99_${n}`, (p99Target ?? 50) / p99, p99Target === undefined ? null : 1);
}

/** Per query class of the hard set: memory.recall's recall@5 over FTS5's. */
function printHardClasses(rows: QualityRow[]): void {
  const [mem, fts5] = rows as [QualityRow, QualityRow, ...QualityRow[]];
  for (const [type, scores] of mem.types) {
    const peer = fts5.types.get(type)?.recallAt5 ?? 0;
    printRatio(
      `memory_recall_at5_vs_fts5_bm25_hard_${type}`,
      ratioOf(scores.recallAt5, peer),
      SCALE_TARGETS.hardClassVsFts5,
    );
  }
}

export async function run(): Promise<void> {
  const standard = loadLabelledSet(join(benchDir, "data", "memory-recall.json"));
  const hard = loadHardSet(join(benchDir, "data", "memory-recall-hard.json"), standard);
  const dataDir = mkdtempSync(join(tmpdir(), "prim-bench-memory-"));
  const clock = new ManualClock(1_700_000_000_000);
  const engine = Engine.openLocal({ dataDir, clock });
  try {
    await engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "bench" });
    const sets: [string, LabelledSet][] = [
      ["standard", standard],
      ["hard", hard],
    ];
    const quality: [string, QualityRow[]][] = [];
    for (const [name, set] of sets) {
      console.log(`${name} set: ${set.memories.length} memories, ${set.queries.length} queries`);
      // Insertion order is shuffled (seeded) so recency carries no hint of the topic.
      quality.push([name, await qualityRun(engine, clock, name, shuffle(set.memories, prng(42)), set.queries)]);
    }
    const sizes = MILLION ? [LATENCY_MEMORIES, 1_000_000] : [LATENCY_MEMORIES];
    for (const size of sizes) {
      console.log(`\nlatency run: remembering ${size} memories …`);
      const started = performance.now();
      const large = await latencyRun(engine, clock, shuffle(standard.memories, prng(42)), standard.queries, size);
      printLarge(large);
      console.log(`RESULT memory_scale_run_seconds_${size} ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    if (VECTORS) {
      console.log(`\nvector run: ${LATENCY_MEMORIES} memories with the hashing embedder …`);
      const labelled = standard.memories;
      const filler = fillerTexts(labelled, Math.max(0, LATENCY_MEMORIES - labelled.length), 11);
      const texts = shuffle([...filler, ...labelled.map((m) => m.text)], prng(7));
      const vectorDir = join(dataDir, "vectors");
      await vectorIndexRun(
        vectorDir,
        clock,
        texts,
        standard.queries.map((q) => q.query),
      );
    }
    const [, standardRows] = quality[0] as [string, QualityRow[]];
    printRatio("memory_recall_at5_standard", (standardRows[0] as QualityRow).all.recallAt5, TARGET_RECALL_AT_5);
    for (const [name, rows] of quality) printSetResults(name, rows);
    const hardRows = quality.find(([name]) => name === "hard");
    if (hardRows !== undefined) printHardClasses(hardRows[1]);
  } finally {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
