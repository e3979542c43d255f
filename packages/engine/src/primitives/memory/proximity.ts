// The lexical ranking of recall: the memories the lexical lists found, ordered by how much of
// the query each holds (every query word weighted by its rarity, BM25 without term frequency)
// and how close together it holds the query's words. A memory that answers a query tends to
// say it in one phrase ("feature flags", "SSO login for Globex"); one that only shares words
// with it scatters them. See README, "Recall".
import { isStopWord, lightStem, words } from "./text.js";

/** One query word and the stored spellings that stand for it (typos, word forms). */
export interface QueryGroup {
  /** The spellings, the query's own first. */
  forms: readonly string[];
  /** Memories holding any of the spellings (the rarer, the more a match counts). */
  docs: number;
  /** The query wrote the word in capitals (an acronym: also matched by its expansion). */
  acronym?: boolean;
}

/**
 * A pair of the query's words held d words apart (1: adjacent), in the query's order, adds
 * PROXIMITY_WEIGHT × the rarer one's weight ÷ √d when d is at most PROXIMITY_WINDOW:
 * closeness orders memories that hold about as much of the query, without outweighing a rarer
 * word held.
 */
export const PROXIMITY_WEIGHT = 0.5;
export const PROXIMITY_WINDOW = 8;
/**
 * A pair held in the opposite order to the query's adds REVERSED_FACTOR of that: "SSO login"
 * answers "SSO login problem" more often than "login … SSO" does (as in the sequential
 * dependence model's ordered and unordered windows).
 */
export const REVERSED_FACTOR = 0.75;
// BM25's constants (FTS5's): the length normalisation of a word's weight.
const K1 = 1.2;
const B = 0.75;
/** Stems shorter than this only match exactly (see `sameStem`). */
const MIN_LOOSE_STEM = 5;
/**
 * An acronym held through its expansion, or an expansion through its acronym (see `acronyms`),
 * counts as the word itself (× ACRONYM_WEIGHT).
 */
export const ACRONYM_WEIGHT = 1;

/** IDF of a word held by `docs` of `total` memories (BM25's, kept positive). */
export function idf(docs: number, total: number): number {
  return Math.log(1 + (total - docs + 0.5) / (docs + 0.5));
}

/**
 * Whether two light stems name the same word: equal, or (both at least 5 characters) differing
 * only in the longer one's last character — expir/expiry, polici/policy — while
 * contract/contrast and mode/model stay apart.
 */
export function sameStem(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (short.length < MIN_LOOSE_STEM || long.length - short.length > 1) return false;
  return long.startsWith(short.slice(0, long.length - 1));
}

/**
 * The score of a text's words: the weight of each query word it holds — IDF, normalised for
 * the text's length as BM25 does (with a count of 1: in a memory of a sentence or two, a word
 * said twice is not more about it) — plus, for each pair of held query words within
 * PROXIMITY_WINDOW words of each other, PROXIMITY_WEIGHT × the rarer one's weight ÷ √distance
 * (× REVERSED_FACTOR when held in the opposite order, if that is the better). 0 when it holds
 * none.
 */
export function proximityScore(
  tokens: readonly string[],
  groups: readonly QueryGroup[],
  total: number,
  averageLength: number,
  capitals: ReadonlySet<number> = new Set(),
): number {
  return scoreTokens(tokens, prepare(groups, total), averageLength, capitals);
}

/** What the score needs of the query, the same for every candidate: its words' stems and IDFs. */
interface PreparedQuery {
  groups: readonly QueryGroup[];
  stems: string[][];
  idfs: number[];
}

function prepare(groups: readonly QueryGroup[], total: number): PreparedQuery {
  return {
    groups,
    stems: groups.map((g) => [...new Set(g.forms.map(lightStem))]),
    idfs: groups.map((g) => idf(g.docs, total)),
  };
}

function scoreTokens(
  tokens: readonly string[],
  { groups, stems, idfs }: PreparedQuery,
  averageLength: number,
  capitals: ReadonlySet<number>,
): number {
  const norm = (K1 + 1) / (1 + K1 * (1 - B + (B * tokens.length) / Math.max(1, averageLength)));
  const weights = idfs.map((w) => w * norm);
  const positions: number[][] = groups.map(() => []);
  const factors = groups.map(() => 0);
  const hold = (g: number, at: number, factor: number) => {
    (positions[g] as number[]).push(at);
    factors[g] = Math.max(factors[g] as number, factor);
  };
  tokens.forEach((word, at) => {
    const stem = lightStem(word);
    stems.forEach((forms, g) => {
      if (forms.some((f) => sameStem(f, stem))) hold(g, at, 1);
    });
  });
  acronyms(tokens, groups, capitals, hold);
  let score = 0;
  const held: number[] = [];
  positions.forEach((p, g) => {
    if (p.length === 0) return;
    p.sort((a, b) => a - b);
    weights[g] = (weights[g] as number) * (factors[g] as number);
    score += weights[g] as number;
    held.push(g);
  });
  for (let i = 0; i < held.length; i++) {
    for (let j = i + 1; j < held.length; j++) {
      const a = held[i] as number;
      const b = held[j] as number;
      const pair = PROXIMITY_WEIGHT * Math.min(weights[a] as number, weights[b] as number);
      // a comes before b in the query: held in that order counts fully, reversed REVERSED_FACTOR.
      const inOrder = minDistance(positions[a] as number[], positions[b] as number[]);
      const reversed = minDistance(positions[b] as number[], positions[a] as number[]);
      let best = 0;
      if (inOrder <= PROXIMITY_WINDOW) best = pair / Math.sqrt(inOrder);
      if (reversed <= PROXIMITY_WINDOW) best = Math.max(best, (REVERSED_FACTOR * pair) / Math.sqrt(reversed));
      score += best;
    }
  }
  return score;
}

/** Letters an acronym has: 2 to 6 (a text's acronym matched by the query's words: 3 to 6). */
const ACRONYM = /^[a-z]{2,6}$/;
const TEXT_ACRONYM = /^[a-z]{3,6}$/;

/**
 * Acronyms against expansions: a query word written in capitals (`SLO`) is held where the
 * text's consecutive words, the first and last not stop words, have its letters as initials
 * ("service level objective", "bring your own device"); and consecutive query words whose
 * initials form a word of 3+ letters the text writes in capitals (`capitals`: positions) are
 * each held there. Both count ACRONYM_WEIGHT of the word.
 */
function acronyms(
  tokens: readonly string[],
  groups: readonly QueryGroup[],
  capitals: ReadonlySet<number>,
  hold: (g: number, at: number, factor: number) => void,
): void {
  groups.forEach((group, g) => {
    const letters = group.forms[0] ?? "";
    if (group.acronym !== true || !ACRONYM.test(letters)) return;
    const n = letters.length;
    for (let i = 0; i + n <= tokens.length; i++) {
      let k = 0;
      while (k < n && (tokens[i + k] as string).length > 1 && (tokens[i + k] as string)[0] === letters[k]) k++;
      if (k < n || isStopWord(tokens[i] as string) || isStopWord(tokens[i + n - 1] as string)) continue;
      hold(g, i, ACRONYM_WEIGHT);
    }
  });
  for (const at of capitals) {
    const word = tokens[at] ?? "";
    if (!TEXT_ACRONYM.test(word)) continue;
    for (let first = 0; first + word.length <= groups.length; first++) {
      const run = groups.slice(first, first + word.length);
      if (run.every((q, k) => (q.forms[0] ?? "")[0] === word[k])) {
        for (let k = 0; k < run.length; k++) hold(first + k, at, ACRONYM_WEIGHT);
      }
    }
  }
}

/**
 * Positions, in `folded` (`words(text)`), of the words the text writes in capitals (`min`+
 * letters, all upper case). None when case folding splits a word (then positions would not
 * line up).
 */
export function capitalPositions(text: string, folded: readonly string[] = words(text), min = 2): Set<number> {
  const out = new Set<number>();
  const { any, whole } = capitalPatterns(min);
  // Most texts have no such word: skip splitting them again.
  if (!any.test(text)) return out;
  const raw =
    text
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  if (raw.length !== folded.length) return out;
  raw.forEach((w, at) => {
    if (whole.test(w)) out.add(at);
  });
  return out;
}

/** `min` capitals in a row somewhere, and a word of `min`+ capitals only; made once per `min`. */
const patterns = new Map<number, { any: RegExp; whole: RegExp }>();
function capitalPatterns(min: number): { any: RegExp; whole: RegExp } {
  let made = patterns.get(min);
  if (made === undefined) {
    made = { any: new RegExp(`\\p{Lu}{${min}}`, "u"), whole: new RegExp(`^\\p{Lu}{${min},}$`, "u") };
    patterns.set(min, made);
  }
  return made;
}

/** Smallest distance from a position of `a` forward to a later one of `b` (both ascending). */
function minDistance(a: readonly number[], b: readonly number[]): number {
  let best = Number.POSITIVE_INFINITY;
  let j = 0;
  for (const x of a) {
    while (j < b.length && (b[j] as number) <= x) j++;
    if (j === b.length) break;
    best = Math.min(best, (b[j] as number) - x);
  }
  return best;
}

/**
 * The candidates best first by `proximityScore`; `candidates` is their order among equals (the
 * lexical lists' fused order), and the texts are theirs. The average length is the candidates'.
 */
export function proximityRanked(
  candidates: readonly number[],
  texts: ReadonlyMap<number, string>,
  groups: readonly QueryGroup[],
  total: number,
): number[] {
  const tokenized = candidates.map((seq) => {
    const text = texts.get(seq) ?? "";
    const tokens = words(text);
    // A text's acronym stands for 3+ consecutive query words (see `acronyms`).
    return { seq, tokens, capitals: groups.length >= 3 ? capitalPositions(text, tokens, 3) : new Set<number>() };
  });
  const averageLength = tokenized.reduce((sum, t) => sum + t.tokens.length, 0) / Math.max(1, tokenized.length);
  const query = prepare(groups, total);
  const scored = tokenized.map(({ seq, tokens, capitals }, order) => ({
    seq,
    order,
    score: scoreTokens(tokens, query, averageLength, capitals),
  }));
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  return scored.map((s) => s.seq);
}
