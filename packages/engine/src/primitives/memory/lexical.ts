import type Database from "better-sqlite3";
import type { SqlFilter, StatementCache } from "./filter.js";
import { capitalPositions, type QueryGroup } from "./proximity.js";
import { isStopWord, lightStem, queryWords, stemSet, words as textWords, wordMatchQuery } from "./text.js";
import type { Vocabulary, WordStats } from "./vocabulary.js";

/** Each lexical signal contributes its best CANDIDATES memories to the fusion. */
export const CANDIDATES = 100;
/**
 * Posting budget of one BM25 query: the query's rarer words, up to this many memories holding
 * them in total, are searched in FTS5; the commoner words only add their BM25 share to the
 * memories found (see `ranked`). BM25 scores every memory holding any searched word, so this
 * bounds the cost of a query on a large store; the rarer words carry most of the score anyway.
 */
export const POSTINGS_BUDGET = 3000;
/**
 * The co-occurrence list ranks the memories holding at least two of the query's words; its
 * words are the rarer ones while the memories expected to hold a pair of them (docsA × docsB ÷
 * memories, summed over the pairs, as if words were independent) stay within this budget.
 */
export const COOCCUR_BUDGET = 5000;
/** Most words the co-occurrence list pairs (28 pairs). */
const COOCCUR_WORDS = 8;
/** In the two-step case, memories fetched by the rarer words before the commoner ones count. */
const RESCORE_POOL = 3 * CANDIDATES;
// FTS5's bm25 constants: the share of a common word in a memory of average length.
const K1 = 1.2;

/** The words of the two lexical rank lists; `fuzzy` is null when no query word has variants. */
export interface LexicalTerms {
  words: WordStats[];
  fuzzy: WordStats[] | null;
  /** Each query word with its variants, for the proximity signal. */
  groups: QueryGroup[];
}

/**
 * The lexical signals: BM25 over the porter-stemmed FTS5 index, for the query's words (a word
 * no memory holds is replaced by the stored words spelt like it) and for the query's words
 * with all their spelling variants (typos, word forms; from the vocabulary's trigram index).
 */
export class LexicalRanker {
  private readonly texts: Database.Statement;
  private readonly count: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly stmts: StatementCache,
    private readonly vocabulary: Vocabulary,
    /** How many memories the store holds (for IDF). */
    private readonly total: () => number,
  ) {
    this.texts = db.prepare("SELECT seq, text FROM memories WHERE seq IN (SELECT value FROM json_each(?))");
    this.count = db.prepare("SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH ?");
  }

  terms(query: string): LexicalTerms {
    const words: WordStats[] = [];
    const expanded = new Map<string, WordStats>();
    let anyVariant = false;
    const groups: QueryGroup[] = [];
    // Words the query writes in capitals (SLO, CI) may be acronyms, matched by their expansion.
    const folded = textWords(query);
    const capitals = new Set([...capitalPositions(query, folded)].map((at) => folded[at]));
    for (const term of this.vocabulary.stats(queryWords(query))) {
      const variants = isStopWord(term.word) ? [] : this.vocabulary.variants(term.word);
      anyVariant ||= variants.length > 0;
      words.push(term);
      // A word no memory holds is most likely misspelt: search for its variants too.
      if (term.docs === 0) words.push(...variants);
      for (const t of [term, ...variants]) expanded.set(t.word, t);
      const forms = [term, ...variants];
      const group: QueryGroup = { forms: forms.map((t) => t.word), docs: forms.reduce((sum, t) => sum + t.docs, 0) };
      if (capitals.has(term.word)) group.acronym = true;
      groups.push(group);
    }
    return { words, fuzzy: anyVariant ? [...expanded.values()] : null, groups };
  }

  /**
   * How many memories FTS5 matches for each word (its stem, so more than the vocabulary's
   * count of the exact word). Counting walks the posting list without scoring it, at a small
   * fraction of what ranking costs; `memo` shares counts between the two lexical lists.
   */
  private matchCounts(terms: readonly WordStats[], memo: Map<string, number>): WordStats[] {
    return terms.map(({ word }) => {
      let docs = memo.get(word);
      if (docs === undefined) {
        docs = (this.count.get(`"${word}"`) as { n: number }).n;
        memo.set(word, docs);
      }
      return { word, docs };
    });
  }

  /**
   * Memory seqs by BM25 over `terms` (any of them), best first, filters applied in SQL; `exact`
   * when every word was searched in FTS5 (no budget cut: the commoner words only re-sorted the
   * rarer ones' best otherwise).
   */
  ranked(
    terms: readonly WordStats[],
    filter: SqlFilter,
    memo: Map<string, number>,
  ): { seqs: number[]; exact: boolean } {
    const byRarity = this.matchCounts(terms, memo).sort((a, b) => a.docs - b.docs);
    let postings = 0;
    let split = 0;
    while (
      split < byRarity.length &&
      (split === 0 || postings + (byRarity[split] as WordStats).docs <= POSTINGS_BUDGET)
    ) {
      postings += (byRarity[split] as WordStats).docs;
      split++;
    }
    const searched = byRarity.slice(0, split);
    const common = byRarity.slice(split);
    const match = wordMatchQuery(searched.map((t) => t.word));
    if (match === null) return { seqs: [], exact: true };
    const rows = this.fts(match, filter, common.length === 0 ? CANDIDATES : RESCORE_POOL);
    if (common.length === 0) return { seqs: rows.map((r) => r.seq), exact: true };
    return { seqs: this.rescore(rows, common).slice(0, CANDIDATES), exact: false };
  }

  /**
   * Memory seqs holding two or more of the words (`(a AND b) OR (a AND c) …` in FTS5), by BM25,
   * best first; empty when fewer than two words are searchable. Among many distractors a memory
   * holding several of the query's words is rare, and this finds it whatever the words'
   * frequencies, where `ranked` may rank only the rarer words. Each word is in as many pairs as
   * any other, so FTS5's BM25 over the pairs is a multiple of BM25 over the words.
   */
  cooccurring(terms: readonly WordStats[], filter: SqlFilter, memo: Map<string, number>): number[] {
    const n = Math.max(1, this.total());
    const byRarity = this.matchCounts(terms, memo)
      .filter((t) => t.docs > 0)
      .sort((a, b) => a.docs - b.docs);
    const chosen: WordStats[] = [];
    let expected = 0;
    for (const t of byRarity) {
      if (chosen.length === COOCCUR_WORDS) break;
      const added = chosen.reduce((sum, c) => sum + (c.docs * t.docs) / n, 0);
      if (chosen.length >= 2 && expected + added > COOCCUR_BUDGET) break;
      chosen.push(t);
      expected += added;
    }
    if (chosen.length < 2) return [];
    const pairs: string[] = [];
    chosen.forEach((a, i) => {
      for (const b of chosen.slice(i + 1)) pairs.push(`("${a.word}" AND "${b.word}")`);
    });
    return this.fts(pairs.join(" OR "), filter, CANDIDATES).map((r) => r.seq);
  }

  /**
   * The best `n` matches by BM25 (FTS5's `bm25()`, faster than its `rank` column), newer first
   * among equals. With filters, the best 2n are ranked first and filtered after — joining
   * every match to its row costs more than ranking it — and only if that leaves fewer than n
   * is the query run again with the filter joined in.
   */
  private fts(match: string, filter: SqlFilter, n: number): { seq: number; score: number }[] {
    const ranked = `SELECT rowid AS seq, -bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH @match
      ORDER BY score DESC, seq DESC LIMIT @n`;
    const params = { ...filter.params, match };
    if (filter.sql === "") return this.stmts.get(ranked).all({ ...params, n }) as { seq: number; score: number }[];
    const pool = 2 * n;
    const sql = `SELECT c.seq AS seq, c.score AS score FROM (${ranked.replace("@n", "@pool")}) c
      JOIN memories m ON m.seq = c.seq WHERE ${filter.sql} ORDER BY c.score DESC, c.seq DESC LIMIT @n`;
    const rows = this.stmts.get(sql).all({ ...params, n, pool }) as { seq: number; score: number }[];
    // Fewer than n: the filter dropped some of the pool, or there are fewer matches (then the
    // second query is as cheap as the first).
    if (rows.length === n) return rows;
    const joined = `SELECT m.seq AS seq, -bm25(memories_fts) AS score FROM memories_fts
      JOIN memories m ON m.seq = memories_fts.rowid WHERE memories_fts MATCH @match AND ${filter.sql}
      ORDER BY score DESC, seq DESC LIMIT @n`;
    return this.stmts.get(joined).all({ ...params, n }) as { seq: number; score: number }[];
  }

  /**
   * Adds each common word's BM25 share to the memories that hold it (a word form of it, by the
   * light stemmer), taking the memory to be of average length, and re-sorts.
   */
  private rescore(rows: { seq: number; score: number }[], common: readonly WordStats[]): number[] {
    const n = this.total();
    const weights = common.map((t) => ({
      stem: lightStem(t.word),
      idf: Math.max(1e-6, Math.log((n - t.docs + 0.5) / (t.docs + 0.5))),
    }));
    const texts = new Map(
      (this.texts.all(JSON.stringify(rows.map((r) => r.seq))) as { seq: number; text: string }[]).map((r) => [
        r.seq,
        r.text,
      ]),
    );
    const scored = rows.map(({ seq, score }) => {
      const stems = stemSet(texts.get(seq) ?? "");
      let total = score;
      for (const w of weights) if (stems.has(w.stem)) total += (w.idf * (K1 + 1)) / (1 + K1);
      return { seq, total };
    });
    scored.sort((a, b) => b.total - a.total || b.seq - a.seq);
    return scored.map((s) => s.seq);
  }
}
