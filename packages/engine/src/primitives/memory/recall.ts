import type Database from "better-sqlite3";
import { decodeVector } from "./embedder.js";
import { type RecallFilter, type SqlFilter, StatementCache, sqlFilter } from "./filter.js";
import { CANDIDATES, LexicalRanker, type LexicalTerms } from "./lexical.js";
import { proximityRanked } from "./proximity.js";
import { type MemoryRow, ROW_COLUMNS } from "./record.js";
import { fold, words as textWords } from "./text.js";
import type { VectorIndex } from "./vectors.js";
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
/**
 * Weights of the lexical lists when fused into the order of their candidates (among equal
 * proximity scores), then of the lists fused into the result: the lexical ranking (proximity.ts)
 * of those candidates, the vector list, and recency, which only orders memories another found.
 */
export const LEXICAL_WEIGHTS = { words: 1, fuzzy: 1, cooccur: 3 } as const;
export const SIGNAL_WEIGHTS = { lexical: 3, vector: 1, recency: 0.05 } as const;
/**
 * The re-score after fusion, among the best `limit + RESCORE_EXTRA`: a memory whose `kind` is
 * a word of the query gains KIND_BONUS / (RRF_K + 1) (a fifth of a first place in a list of
 * weight 1); a superseded memory (shown with `include_superseded`) keeps SUPERSEDED_FACTOR of
 * its score, so it follows what replaced it when both match alike. Recency is the list above.
 */
export const KIND_BONUS = 0.2;
export const SUPERSEDED_FACTOR = 0.9;
const RESCORE_EXTRA = 10;

/**
 * Recall. The lexical lists — BM25 over porter-stemmed words (a word no memory holds is
 * replaced by the stored words spelt like it), BM25 over the query words and all their spelling
 * variants (typos, word forms; found through a trigram index over the vocabulary), BM25 over
 * the memories holding two or more of the query's words — find the candidates; their fused
 * order breaks ties of the lexical ranking (proximity.ts: rarity-weighted coverage of the
 * query and closeness of its words). That ranking and, when an embedder is configured, cosine
 * over embeddings through the vector index are fused by reciprocal rank fusion with a small
 * recency term among the memories they found, then a light re-score (kind, supersession).
 */
export class Recaller {
  private readonly stmts: StatementCache;
  private readonly lexical: LexicalRanker;
  private readonly hydrate: Database.Statement;
  private readonly texts: Database.Statement;

  constructor(
    db: Database.Database,
    vocabulary: Vocabulary,
    private readonly total: () => number,
    private readonly vectors: VectorIndex,
  ) {
    this.stmts = new StatementCache(db);
    this.lexical = new LexicalRanker(db, this.stmts, vocabulary, total);
    this.hydrate = db.prepare(`SELECT ${ROW_COLUMNS} FROM memories WHERE seq IN (SELECT value FROM json_each(?))`);
    this.texts = db.prepare("SELECT seq, text FROM memories WHERE seq IN (SELECT value FROM json_each(?))");
  }

  recall(options: RecallOptions): RecallHit[] {
    const filter = sqlFilter(options);
    const terms = this.lexical.terms(options.query);
    const lists: RankList[] = [];
    const lexical = this.lexicalRanking(terms, filter);
    if (lexical.length > 0) lists.push({ weight: SIGNAL_WEIGHTS.lexical, seqs: lexical });
    if (options.queryVector !== null) {
      const query = decodeVector(options.queryVector);
      lists.push({ weight: SIGNAL_WEIGHTS.vector, seqs: this.vectors.search(query, filter, CANDIDATES) });
    }
    const queryWords = new Set(textWords(options.query));
    return this.fuse(lists, options.limit, (row) => {
      let factor = 1;
      let bonus = 0;
      // As of a past time, `superseded_by` may be newer than that time: no supersession term.
      if (options.asOf === undefined && row.superseded_by !== null) factor = SUPERSEDED_FACTOR;
      if (queryWords.has(fold(row.kind))) bonus = KIND_BONUS / (RRF_K + 1);
      return { factor, bonus };
    });
  }

  /** The lexical lists' candidates (up to 3 × CANDIDATES), best first by proximity.ts. */
  private lexicalRanking(terms: LexicalTerms, filter: SqlFilter): number[] {
    const lists: RankList[] = [];
    const counts = new Map<string, number>();
    const words = this.lexical.ranked(terms.words, filter, counts);
    // Budget-cut (a large store): its commoner words only re-sorted the rarer ones' best, and
    // the co-occurrence list ranks better; its order stays out of the ties' order.
    lists.push({ weight: terms.words.length > 0 && words.exact ? LEXICAL_WEIGHTS.words : 0, seqs: words.seqs });
    if (terms.fuzzy !== null) {
      // Often the same words (every variant was a correction): same ranking, no second query.
      const same = terms.fuzzy.map((t) => t.word).join(" ") === terms.words.map((t) => t.word).join(" ");
      lists.push({
        weight: LEXICAL_WEIGHTS.fuzzy,
        seqs: same ? words.seqs : this.lexical.ranked(terms.fuzzy, filter, counts).seqs,
      });
    }
    lists.push({ weight: LEXICAL_WEIGHTS.cooccur, seqs: this.lexical.cooccurring(terms.words, filter, counts) });
    const candidates = [...rrf(lists).entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([seq]) => seq);
    if (candidates.length === 0) return [];
    const texts = new Map(
      (this.texts.all(JSON.stringify(candidates)) as { seq: number; text: string }[]).map((r) => [r.seq, r.text]),
    );
    return proximityRanked(candidates, texts, terms.groups, this.total());
  }

  /**
   * Reciprocal rank fusion of the lists, a recency list over their union, then the re-score of
   * the best `limit + RESCORE_EXTRA`: top `limit`.
   */
  private fuse(
    lists: RankList[],
    limit: number,
    rescore: (row: MemoryRow) => { factor: number; bonus: number },
  ): RecallHit[] {
    const fused = rrf(lists);
    const best = lists.reduce((sum, l) => sum + l.weight / (RRF_K + 1), 0) + SIGNAL_WEIGHTS.recency / (RRF_K + 1);
    if (fused.size === 0) return [];
    const newestFirst = [...fused.keys()].sort((a, b) => b - a);
    newestFirst.forEach((seq, i) => {
      fused.set(seq, (fused.get(seq) as number) + SIGNAL_WEIGHTS.recency / (RRF_K + i + 1));
    });
    const top = [...fused.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, limit + RESCORE_EXTRA);
    const rows = new Map(
      (this.hydrate.all(JSON.stringify(top.map(([seq]) => seq))) as MemoryRow[]).map((r) => [r.seq, r]),
    );
    const hits: (RecallHit & { seq: number })[] = [];
    for (const [seq, fusedScore] of top) {
      const row = rows.get(seq);
      if (row === undefined) continue;
      const { factor, bonus } = rescore(row);
      const score = Math.min(1, (fusedScore * factor + bonus) / best);
      hits.push({ seq, row, score: Math.round(score * 1e6) / 1e6 });
    }
    hits.sort((a, b) => b.score - a.score || b.seq - a.seq);
    return hits.slice(0, limit).map(({ row, score }) => ({ row, score }));
  }
}

interface RankList {
  weight: number;
  seqs: number[];
}

/** Reciprocal rank fusion: seq → the sum over the lists of weight ÷ (RRF_K + rank). */
function rrf(lists: readonly RankList[]): Map<number, number> {
  const fused = new Map<number, number>();
  for (const { weight, seqs } of lists) {
    seqs.forEach((seq, i) => {
      fused.set(seq, (fused.get(seq) ?? 0) + weight / (RRF_K + i + 1));
    });
  }
  return fused;
}
