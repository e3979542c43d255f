// Data for bench/memory-recall.ts: the labelled sets, the peers recall is compared with
// (SQLite FTS5 BM25 and a per-word substring baseline), the metrics, and filler memories for
// the latency run.
import { readFileSync } from "node:fs";
import Database from "better-sqlite3";

export interface LabelledMemory {
  id: string;
  kind: string;
  text: string;
  tags: string[];
  owner?: string;
}

export interface LabelledQuery {
  query: string;
  /** Standard set: direct, typo, paraphrase, distractor. Hard set: typo_any,
   * paraphrase_disjoint, near_duplicate. */
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

/**
 * The hard set: its queries over the standard set's memories plus its own near-duplicates.
 * Throws when a `paraphrase_disjoint` query shares a content word with an answer (same first
 * four letters, so word forms count as shared) or a query names a memory that does not exist:
 * the set must stay what its README section says it is.
 */
export function loadHardSet(path: string, standard: LabelledSet): LabelledSet {
  const extra = loadLabelledSet(path);
  const memories = [...standard.memories, ...extra.memories];
  const byId = new Map(memories.map((m) => [m.id, m]));
  const stems = (text: string) => contentTerms(text).map((w) => w.slice(0, 4));
  for (const q of extra.queries) {
    for (const id of q.expected) {
      const answer = byId.get(id);
      if (answer === undefined) throw new Error(`hard set: "${q.query}" expects unknown memory ${id}`);
      if (q.type !== "paraphrase_disjoint") continue;
      const answerStems = new Set(stems(answer.text));
      const shared = contentTerms(q.query).filter((w) => answerStems.has(w.slice(0, 4)));
      if (shared.length > 0) throw new Error(`hard set: "${q.query}" shares ${shared.join(", ")} with ${id}`);
    }
  }
  return { memories, queries: extra.queries };
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

// The per-word baseline's stop words: 36 common function words, so it does not match "the"
// everywhere. Recall drops more (119 words, packages/engine/src/primitives/memory/text.ts);
// this shorter list is what an application would write by hand.
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
/** Lowercase words of 3+ letters or digits, without the baseline's stop words. */
function contentTerms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length >= 3 && !BASELINE_STOP.has(w));
}

export function wordSubstringBaseline(
  memories: readonly { id: string; text: string }[],
  query: string,
  limit: number,
): string[] {
  const words = [...new Set(contentTerms(query))];
  const scored: { id: string; hits: number; order: number }[] = [];
  memories.forEach((m, order) => {
    const text = m.text.toLowerCase();
    const hits = words.filter((w) => text.includes(w)).length;
    if (hits > 0) scored.push({ id: m.id, hits, order });
  });
  scored.sort((a, b) => b.hits - a.hits || b.order - a.order);
  return scored.slice(0, limit).map((s) => s.id);
}

/**
 * What a user would build with SQLite in ten minutes: an FTS5 table with the porter and
 * unicode61 tokenizers, `MATCH` on the query's words joined with OR (each quoted, so no word is
 * read as FTS5 syntax; no stop words dropped: BM25's IDF weighs them down), `ORDER BY bm25`,
 * newest first among equal scores. In memory, in this process; `close` frees it.
 */
export function fts5Baseline(memories: readonly { id: string; text: string }[]) {
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE notes USING fts5(text, tokenize = 'porter unicode61')");
  const insert = db.prepare("INSERT INTO notes (rowid, text) VALUES (?, ?)");
  db.transaction(() => {
    memories.forEach((m, i) => {
      insert.run(i + 1, m.text);
    });
  })();
  const search = db.prepare(
    "SELECT rowid AS n FROM notes WHERE notes MATCH ? ORDER BY bm25(notes), rowid DESC LIMIT ?",
  );
  return {
    rank(query: string, limit: number): string[] {
      const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
      if (words.length === 0) return [];
      const rows = search.all(words.map((w) => `"${w}"`).join(" OR "), limit) as { n: number }[];
      return rows.map((r) => (memories[r.n - 1] as { id: string }).id);
    },
    close: () => db.close(),
  };
}

export interface Scores {
  recallAt1: number;
  recallAt5: number;
  mrr: number;
}

/**
 * recall@k: expected memories found in the first k results over min(k, expected count),
 * averaged over queries (recall@1: the share of queries whose first result answers them;
 * recall@5: the share of expected memories in the first 5, as no query expects more than 5).
 * MRR: 1 / rank of the first expected memory within the first 10 results (0 if none),
 * averaged over queries.
 */
export function score(rankings: readonly string[][], queries: readonly LabelledQuery[]): Scores {
  const recallAt = (ranked: string[], q: LabelledQuery, k: number) => {
    const top = new Set(ranked.slice(0, k));
    return q.expected.filter((id) => top.has(id)).length / Math.min(k, q.expected.length);
  };
  let r1 = 0;
  let r5 = 0;
  let rr = 0;
  queries.forEach((q, i) => {
    const ranked = rankings[i] ?? [];
    r1 += recallAt(ranked, q, 1);
    r5 += recallAt(ranked, q, 5);
    const first = ranked.slice(0, 10).findIndex((id) => q.expected.includes(id));
    rr += first === -1 ? 0 : 1 / (first + 1);
  });
  const n = queries.length;
  return { recallAt1: r1 / n, recallAt5: r5 / n, mrr: rr / n };
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
