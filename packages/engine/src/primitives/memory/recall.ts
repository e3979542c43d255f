import type Database from "better-sqlite3";
import { decodeVector, dot } from "./embedder.js";
import { type RecallFilter, type SqlFilter, StatementCache, sqlFilter } from "./filter.js";
import { CANDIDATES, LexicalRanker } from "./lexical.js";
import { type MemoryRow, ROW_COLUMNS } from "./record.js";
import type { Vocabulary } from "./vocabulary.js";

export interface RecallOptions extends RecallFilter {
  query: string;
  limit: number;
  /** The query's unit vector (float32 bytes) when an embedder is configured and answered. */
  queryVector: Buffer | null;
}

export interface RecallHit {
  row: MemoryRow;
  /** 0..1: 1 means ranked first by every signal that ran (see README, "Recall"). */
  score: number;
}

/** Reciprocal rank fusion constant: a list's item at rank r adds weight / (RRF_K + r). */
export const RRF_K = 60;
/** Weights of the fused rank lists. Recency only orders memories some other signal found. */
export const SIGNAL_WEIGHTS = { words: 1, fuzzy: 1, vector: 1, recency: 0.05 } as const;
/** Vector signal: cosine over at most this many memories (the newest that pass the filters). */
export const VECTOR_SCAN_LIMIT = 20_000;

/**
 * Recall: rank lists fused by reciprocal rank fusion — BM25 over porter-stemmed words (a word
 * no memory holds is replaced by the stored words spelt like it), BM25 over the query words and
 * all their spelling variants (typos, word forms; found through a trigram index over the
 * vocabulary), and cosine over embeddings when an embedder is configured — plus a small
 * recency term among the memories they found.
 */
export class Recaller {
  private readonly stmts: StatementCache;
  private readonly lexical: LexicalRanker;
  private readonly hydrate: Database.Statement;

  constructor(db: Database.Database, vocabulary: Vocabulary, total: () => number) {
    this.stmts = new StatementCache(db);
    this.lexical = new LexicalRanker(db, this.stmts, vocabulary, total);
    this.hydrate = db.prepare(`SELECT ${ROW_COLUMNS} FROM memories WHERE seq IN (SELECT value FROM json_each(?))`);
  }

  recall(options: RecallOptions): RecallHit[] {
    const filter = sqlFilter(options);
    const terms = this.lexical.terms(options.query);
    const lists: { weight: number; seqs: number[] }[] = [];
    const counts = new Map<string, number>();
    const words = this.lexical.ranked(terms.words, filter, counts);
    if (terms.words.length > 0) lists.push({ weight: SIGNAL_WEIGHTS.words, seqs: words });
    if (terms.fuzzy !== null) {
      // Often the same words (every variant was a correction): same ranking, no second query.
      const same = terms.fuzzy.map((t) => t.word).join(" ") === terms.words.map((t) => t.word).join(" ");
      lists.push({
        weight: SIGNAL_WEIGHTS.fuzzy,
        seqs: same ? words : this.lexical.ranked(terms.fuzzy, filter, counts),
      });
    }
    if (options.queryVector !== null) {
      lists.push({ weight: SIGNAL_WEIGHTS.vector, seqs: this.vectorRanked(options.queryVector, filter) });
    }
    return this.fuse(lists, options.limit);
  }

  /** The newest VECTOR_SCAN_LIMIT filtered memories with a vector, by cosine to the query. */
  private vectorRanked(query: Buffer, filter: SqlFilter): number[] {
    const q = decodeVector(query);
    const where = filter.sql === "" ? "m.vector IS NOT NULL" : `m.vector IS NOT NULL AND ${filter.sql}`;
    const sql = `SELECT m.seq AS seq, m.vector AS vector FROM memories m WHERE ${where} ORDER BY m.seq DESC LIMIT @n`;
    const scored: { seq: number; sim: number }[] = [];
    for (const row of this.stmts.get(sql).iterate({ ...filter.params, n: VECTOR_SCAN_LIMIT }) as Iterable<{
      seq: number;
      vector: Buffer;
    }>) {
      const v = decodeVector(row.vector);
      if (v.length === q.length) scored.push({ seq: row.seq, sim: dot(q, v) });
    }
    scored.sort((a, b) => b.sim - a.sim || b.seq - a.seq);
    return scored.slice(0, CANDIDATES).map((s) => s.seq);
  }

  /** Reciprocal rank fusion of the lists, a recency list over their union, top `limit`. */
  private fuse(lists: { weight: number; seqs: number[] }[], limit: number): RecallHit[] {
    const fused = new Map<number, number>();
    let best = 0;
    for (const { weight, seqs } of lists) {
      best += weight / (RRF_K + 1);
      seqs.forEach((seq, i) => {
        fused.set(seq, (fused.get(seq) ?? 0) + weight / (RRF_K + i + 1));
      });
    }
    if (fused.size === 0) return [];
    best += SIGNAL_WEIGHTS.recency / (RRF_K + 1);
    const newestFirst = [...fused.keys()].sort((a, b) => b - a);
    newestFirst.forEach((seq, i) => {
      fused.set(seq, (fused.get(seq) as number) + SIGNAL_WEIGHTS.recency / (RRF_K + i + 1));
    });
    const top = [...fused.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, limit);
    const rows = new Map(
      (this.hydrate.all(JSON.stringify(top.map(([seq]) => seq))) as MemoryRow[]).map((r) => [r.seq, r]),
    );
    const hits: RecallHit[] = [];
    for (const [seq, score] of top) {
      const row = rows.get(seq);
      if (row !== undefined) hits.push({ row, score: Math.round((score / best) * 1e6) / 1e6 });
    }
    return hits;
  }
}
