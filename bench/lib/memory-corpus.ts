// Data for bench/memory-recall.ts: the labelled set, the two substring baselines, the
// metrics, and filler memories for the latency run.
import { readFileSync } from "node:fs";

export interface LabelledMemory {
  id: string;
  kind: string;
  text: string;
  tags: string[];
  owner?: string;
}

export interface LabelledQuery {
  query: string;
  /** direct, typo, paraphrase or distractor. */
  type: string;
  /** Dataset ids of the memories that answer the query. */
  expected: string[];
}

export interface LabelledSet {
  memories: LabelledMemory[];
  queries: LabelledQuery[];
}

export function loadLabelledSet(path: string): LabelledSet {
  return JSON.parse(readFileSync(path, "utf8")) as LabelledSet;
}

/** A small seeded PRNG (mulberry32), so every run builds the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

// The baselines' stop words: the same function words recall drops, so neither side is
// penalised for matching "the" everywhere.
const BASELINE_STOP = new Set(
  "a an and are as at be by can do does for from has have how i in is it of on or the their to was we what when where which who why will with".split(
    " ",
  ),
);

/**
 * What an application without a search engine does: `text LIKE '%word%'` for each query word
 * (case-insensitive, 3+ characters, stop words skipped), ranked by how many words matched,
 * newest first among equals. Memories matching no word are not returned.
 */
export function wordSubstringBaseline(
  memories: readonly { id: string; text: string }[],
  query: string,
  limit: number,
): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter(
    (w) => w.length >= 3 && !BASELINE_STOP.has(w),
  );
  const scored: { id: string; hits: number; order: number }[] = [];
  memories.forEach((m, order) => {
    const text = m.text.toLowerCase();
    const hits = words.filter((w) => text.includes(w)).length;
    if (hits > 0) scored.push({ id: m.id, hits, order });
  });
  scored.sort((a, b) => b.hits - a.hits || b.order - a.order);
  return scored.slice(0, limit).map((s) => s.id);
}

/** The literal baseline: memories containing the whole query (case-insensitive), newest first. */
export function wholeQuerySubstringBaseline(
  memories: readonly { id: string; text: string }[],
  query: string,
  limit: number,
): string[] {
  const q = query.toLowerCase();
  const out: string[] = [];
  for (let i = memories.length - 1; i >= 0 && out.length < limit; i--) {
    const m = memories[i] as { id: string; text: string };
    if (m.text.toLowerCase().includes(q)) out.push(m.id);
  }
  return out;
}

export interface Scores {
  recallAt5: number;
  mrr: number;
}

/**
 * recall@5: the share of a query's expected memories found in the first 5 results, averaged
 * over queries. MRR: 1 / rank of the first expected memory within the first 10 results (0 if
 * none), averaged over queries.
 */
export function score(rankings: readonly string[][], queries: readonly LabelledQuery[]): Scores {
  let recall = 0;
  let rr = 0;
  queries.forEach((q, i) => {
    const ranked = rankings[i] ?? [];
    const top5 = new Set(ranked.slice(0, 5));
    recall += q.expected.filter((id) => top5.has(id)).length / q.expected.length;
    const first = ranked.slice(0, 10).findIndex((id) => q.expected.includes(id));
    rr += first === -1 ? 0 : 1 / (first + 1);
  });
  return { recallAt5: recall / queries.length, mrr: rr / queries.length };
}

/**
 * Filler memories for the latency run: sentences drawn from the labelled set's vocabulary
 * with a Zipf distribution (word of rank r chosen with weight 1/r), so posting lists have the
 * skew of natural text, with numbers and names mixed in.
 */
export function fillerTexts(memories: readonly LabelledMemory[], count: number, seed: number): string[] {
  const random = prng(seed);
  const frequency = new Map<string, number>();
  for (const m of memories) {
    for (const w of m.text.match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []) {
      frequency.set(w, (frequency.get(w) ?? 0) + 1);
    }
  }
  const vocabulary = [...frequency.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  const cumulative: number[] = [];
  let total = 0;
  vocabulary.forEach((_, r) => {
    total += 1 / (r + 1);
    cumulative.push(total);
  });
  const pick = (): string => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo] as string;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = 8 + Math.floor(random() * 18);
    const words: string[] = [];
    for (let k = 0; k < length; k++) words.push(random() < 0.04 ? String(Math.floor(random() * 10_000)) : pick());
    const sentence = words.join(" ");
    out.push(`${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`);
  }
  return out;
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}
