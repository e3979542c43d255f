// The vector path of bench/memory-recall.ts: memories remembered with a deterministic local
// embedder stand-in (feature hashing, no model, no network), then the IVF index (the engine's
// memory/vectors.ts) measured against exact search over every vector: the share of the true
// top 10 it finds, and the latency of both.

import { existsSync, statSync } from "node:fs";
import {
  decodeVector,
  type Embedder,
  Engine,
  encodeVector,
  IVF_NPROBE,
  LOCAL_PRINCIPAL,
  type ManualClock,
  openVectorIndex,
  type PrimitiveInfo,
} from "@prim/engine";
import Database from "better-sqlite3";
import { percentile } from "./memory-corpus.js";

/** Memories held when recall is measured on the exact path (below IVF_MIN_VECTORS). */
const EXACT_AT = 10_000;

/** Dimensions of the stand-in's vectors (text-embedding-3-small has 1,536; 256 keeps the run short). */
export const HASH_DIMS = 256;

function fnv(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/**
 * Feature hashing: each word (weight 1) and each of its padded character trigrams (0.5) adds
 * ±weight to one of HASH_DIMS dimensions, the sign from another bit of the hash. Texts sharing
 * words or word pieces get close vectors; it knows no synonyms.
 */
export function hashEmbed(text: string): number[] {
  const v = new Array<number>(HASH_DIMS).fill(0);
  const add = (token: string, weight: number) => {
    const h = fnv(token);
    const dim = h % HASH_DIMS;
    v[dim] = (v[dim] as number) + (h & 0x80000000 ? -weight : weight);
  };
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    add(word, 1);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(`#${padded.slice(i, i + 3)}`, 0.5);
  }
  return v;
}

export const hashEmbedder: Embedder = { embed: async (texts) => texts.map(hashEmbed) };

/**
 * Waits (reading the engine's own connection to the file: the engine holds it exclusively)
 * until the index is trained, has one set of lists, every vector is in one, and no new
 * training is due.
 */
async function settled(db: Database.Database): Promise<void> {
  const n = (sql: string) => (db.prepare(sql).get() as { n: number | null }).n ?? 0;
  for (;;) {
    const trainedOn = n("SELECT max(trained_on) AS n FROM memory_ivf_state");
    const vectors = n("SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL");
    const unindexed = n("SELECT count(*) AS n FROM memories WHERE vector IS NOT NULL AND ivf_list IS NULL");
    const banks = n("SELECT count(DISTINCT list / 4096) AS n FROM memory_ivf");
    if (trainedOn > 0 && vectors < 4 * trainedOn && unindexed === 0 && banks === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Remembers `texts` with the stand-in embedder, then measures the IVF against exact search. */
export async function vectorIndexRun(
  dataDir: string,
  clock: ManualClock,
  texts: readonly string[],
  queries: readonly string[],
): Promise<void> {
  const engine = Engine.openLocal({ dataDir, clock, embedder: hashEmbedder });
  let path = "";
  const chunkSeconds: number[] = [];
  try {
    await engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "vectors" });
    const p = await engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
      name: "vectors",
      type: "memory",
      group: "vectors",
    });
    path = engine.services.files.path(p.id);
    const recall = async (label: string, n = texts.length) => {
      const recallMs: number[] = [];
      for (const query of queries) {
        const t = performance.now();
        await engine.invoke(LOCAL_PRINCIPAL, "memory.recall", p.id, { query, limit: 10 });
        recallMs.push(performance.now() - t);
      }
      recallMs.sort((a, b) => a - b);
      for (const q of [0.5, 0.99]) {
        const name = `memory_recall_with_vectors${label}_p${q * 100}_${n}`;
        console.log(`RESULT ${name} ${percentile(recallMs, q).toFixed(2)} ms`);
      }
    };
    const start = performance.now();
    let slowestRemember = 0;
    /** Time spent measuring recall between the inserts: not remember time. */
    let paused = 0;
    for (let i = 0; i < texts.length; i += 1000) {
      const chunkStart = performance.now();
      await Promise.all(
        texts.slice(i, i + 1000).map(async (text) => {
          clock.advance(60_000);
          const t = performance.now();
          await engine.invoke(LOCAL_PRINCIPAL, "memory.remember", p.id, { kind: "fact", text });
          slowestRemember = Math.max(slowestRemember, performance.now() - t);
        }),
      );
      chunkSeconds.push((performance.now() - chunkStart) / 1000);
      // Below IVF_MIN_VECTORS recall compares every vector exactly: measured once on the way.
      if (i + 1000 === EXACT_AT) {
        const t = performance.now();
        await recall("_exact", EXACT_AT);
        paused += performance.now() - t;
      }
    }
    const rate = texts.length / ((performance.now() - start - paused) / 1000);
    console.log(`RESULT memory_remember_rate_with_vectors_${texts.length} ${rate.toFixed(0)} memories/s`);
    const sorted = [...chunkSeconds].sort((a, b) => a - b);
    // A chunk's 1,000 remembers share one or a few group commits: a commit that trains or
    // reassigns the IVF in the write shows as the slowest chunk and the slowest single remember.
    console.log(`RESULT memory_vector_slowest_remember ${slowestRemember.toFixed(0)} ms`);
    console.log(`RESULT memory_vector_slowest_1000_remembers ${(1000 * (sorted.at(-1) ?? 0)).toFixed(0)} ms`);
    console.log(`RESULT memory_vector_median_1000_remembers ${(1000 * percentile(sorted, 0.5)).toFixed(0)} ms`);
    // Right after the inserts the index may still be training or moving vectors between lists
    // (between writes, engine README "Vector index"); then again once it has settled.
    await recall("_after_inserts");
    const settleStart = performance.now();
    await settled(engine.services.files.handle(p.id, "memory").db as Database.Database);
    console.log(`RESULT memory_vector_index_settled_after ${((performance.now() - settleStart) / 1000).toFixed(1)} s`);
    await recall("");
  } finally {
    await engine.close();
  }
  let bytes = 0;
  for (const file of [path, `${path}-wal`]) if (existsSync(file)) bytes += statSync(file).size;
  console.log(`RESULT memory_vector_file_bytes_per_memory_${texts.length} ${(bytes / texts.length).toFixed(0)} bytes`);
  const db = new Database(path);
  try {
    for (const nprobe of [IVF_NPROBE / 2, IVF_NPROBE, IVF_NPROBE * 2]) {
      const index = openVectorIndex(db, { nprobe });
      const ivfMs: number[] = [];
      const exactMs: number[] = [];
      let found = 0;
      let wanted = 0;
      for (const query of queries) {
        const q = decodeVector(encodeVector(hashEmbed(query)) as Buffer);
        let t = performance.now();
        const truth = index.exact(q, 10);
        exactMs.push(performance.now() - t);
        t = performance.now();
        const got = new Set(index.search(q, 10));
        ivfMs.push(performance.now() - t);
        found += truth.filter((seq) => got.has(seq)).length;
        wanted += truth.length;
      }
      ivfMs.sort((a, b) => a - b);
      exactMs.sort((a, b) => a - b);
      const n = texts.length;
      console.log(`RESULT memory_ivf_nprobe${nprobe}_recall_at10_of_exact_${n} ${(found / wanted).toFixed(3)} ratio`);
      console.log(`RESULT memory_ivf_nprobe${nprobe}_p50_${n} ${percentile(ivfMs, 0.5).toFixed(2)} ms`);
      console.log(`RESULT memory_ivf_nprobe${nprobe}_p99_${n} ${percentile(ivfMs, 0.99).toFixed(2)} ms`);
      if (nprobe === IVF_NPROBE) {
        console.log(`RESULT memory_vector_exact_p50_${n} ${percentile(exactMs, 0.5).toFixed(2)} ms`);
        console.log(`RESULT memory_vector_exact_p99_${n} ${percentile(exactMs, 0.99).toFixed(2)} ms`);
      }
    }
  } finally {
    db.close();
  }
}
