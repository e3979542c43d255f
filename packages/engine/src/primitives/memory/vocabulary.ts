import type Database from "better-sqlite3";
import { isStopWord, words } from "./text.js";

/**
 * The distinct words of the stored texts, with how many memories hold each, and an FTS5
 * trigram index over them. Recall's fuzzy signal looks a query word up here — the vocabulary
 * is far smaller than the texts — and expands it to the stored words that are spelt alike
 * (typos, word forms); the texts are then ranked by BM25 over those words.
 *
 * Words are indexed padded with a space on both sides, so trigrams also mark word edges.
 */
export const VOCABULARY_SCHEMA = `
CREATE TABLE IF NOT EXISTS memory_words (
  id INTEGER PRIMARY KEY,
  word TEXT NOT NULL UNIQUE,
  docs INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_words_tri USING fts5(word, tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS memory_words_after_insert AFTER INSERT ON memory_words BEGIN
  INSERT INTO memory_words_tri (rowid, word) VALUES (new.id, ' ' || new.word || ' ');
END;
CREATE TRIGGER IF NOT EXISTS memory_words_after_delete AFTER DELETE ON memory_words BEGIN
  DELETE FROM memory_words_tri WHERE rowid = old.id;
END;
INSERT INTO memory_words_tri (memory_words_tri, rank) VALUES ('secure-delete', 1);
`;

/** Words longer than this (hashes, base64, URLs run together) are not worth correcting to. */
const MAX_WORD_CHARS = 40;
/** Query words shorter than this are not expanded: too many short words look alike. */
const MIN_FUZZY_CHARS = 4;
/** Vocabulary words fetched per query word before scoring them. */
const FUZZY_CANDIDATES = 64;
/** Stored words kept per query word: the most similar ones. */
export const MAX_EXPANSIONS = 4;
/** A stored word is a variant when its trigram Dice similarity reaches this (0..1) and it
 * starts with the same two characters… */
export const MIN_DICE = 0.5;

export interface WordStats {
  word: string;
  /** Memories holding the word exactly (folded), 0 when none. */
  docs: number;
}

function paddedTrigrams(word: string): string[] {
  const chars = Array.from(` ${word} `);
  const out = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(""));
  return [...out];
}

function dice(a: readonly string[], b: readonly string[]): number {
  const set = new Set(a);
  let shared = 0;
  for (const g of b) if (set.has(g)) shared++;
  return (2 * shared) / (a.length + b.length);
}

/** Optimal-string-alignment distance (Damerau: a swap of neighbours counts as one edit). */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows = [new Array<number>(b.length + 1).fill(0).map((_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((rows[i - 1]?.[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (rows[i - 1]?.[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? max + 1;
}

/** …or when it is within this many edits (one per five characters, at most two). */
function maxEdits(word: string): number {
  return Math.min(2, Math.floor(word.length / 5));
}

export class Vocabulary {
  private readonly stmts;

  constructor(db: Database.Database) {
    db.exec(VOCABULARY_SCHEMA);
    this.stmts = {
      add: db.prepare(
        "INSERT INTO memory_words (word, docs) VALUES (?, 1) ON CONFLICT (word) DO UPDATE SET docs = docs + 1",
      ),
      decrement: db.prepare("UPDATE memory_words SET docs = docs - 1 WHERE word = ? RETURNING docs"),
      remove: db.prepare("DELETE FROM memory_words WHERE word = ?"),
      docs: db.prepare("SELECT docs FROM memory_words WHERE word = ?"),
      similar: db.prepare(
        `SELECT w.word AS word, w.docs AS docs FROM memory_words_tri JOIN memory_words w ON w.id = memory_words_tri.rowid
         WHERE memory_words_tri MATCH ? ORDER BY memory_words_tri.rank LIMIT ${FUZZY_CANDIDATES}`,
      ),
    };
  }

  private static distinctWords(text: string): string[] {
    // Stop words are never looked up (recall drops them from queries), so they are not counted.
    return [...new Set(words(text))].filter((w) => w.length <= MAX_WORD_CHARS && !isStopWord(w));
  }

  /** Counts a new text's words (inside the caller's transaction). */
  add(text: string): void {
    for (const word of Vocabulary.distinctWords(text)) this.stmts.add.run(word);
  }

  /** Uncounts a deleted text's words; words no memory holds any more leave the vocabulary. */
  remove(text: string): void {
    for (const word of Vocabulary.distinctWords(text)) {
      const left = this.stmts.decrement.get(word) as { docs: number } | undefined;
      if (left !== undefined && left.docs <= 0) this.stmts.remove.run(word);
    }
  }

  stats(terms: readonly string[]): WordStats[] {
    return terms.map((word) => ({
      word,
      docs: (this.stmts.docs.get(word) as { docs: number } | undefined)?.docs ?? 0,
    }));
  }

  /**
   * Stored words spelt like `word` (not the word itself): within a small edit distance, or
   * sharing most trigrams (word forms: deploy / deployment / deploying). Most similar first.
   */
  variants(word: string): WordStats[] {
    if (Array.from(word).length < MIN_FUZZY_CHARS) return [];
    const grams = paddedTrigrams(word);
    const match = grams.map((g) => `"${g.replaceAll('"', '""')}"`).join(" OR ");
    const edits = maxEdits(word);
    const scored: (WordStats & { sim: number })[] = [];
    for (const row of this.stmts.similar.all(match) as WordStats[]) {
      if (row.word === word) continue;
      const sim = dice(grams, paddedTrigrams(row.word));
      // Word forms share their beginning (deploy, deploying); without that rule "guests" would
      // pass for "requests".
      const form = sim >= MIN_DICE && row.word.slice(0, 2) === word.slice(0, 2);
      if (form || (edits > 0 && editDistance(word, row.word, edits) <= edits)) scored.push({ ...row, sim });
    }
    scored.sort((a, b) => b.sim - a.sim || b.docs - a.docs || (a.word < b.word ? -1 : 1));
    return scored.slice(0, MAX_EXPANSIONS).map(({ word: w, docs }) => ({ word: w, docs }));
  }
}
