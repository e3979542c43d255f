// Text handling shared by recall and consolidate: words, stop words, a light stemmer. It
// folds text the way the FTS5 tables do (unicode61 with diacritics removed, case-folded), so
// what the JS side derives from a query lines up with what SQLite indexed.

/**
 * Function words that carry no topic. Dropped from recall queries (they match nearly every
 * memory and cost the most to rank) and from consolidate's similarity. Negations (`no`, `not`,
 * `never`) are kept on purpose: "deploy on Fridays" and "never deploy on Fridays" differ.
 */
const STOP_WORDS = new Set(
  (
    "a an and are as at be been being but by can could did do does doing for from had has have having he her " +
    "here hers him his how i if in into is it its itself just me my myself of off on once or our ours out over " +
    "own same she should so some such than that the their theirs them then there these they this those through " +
    "to too under until up very was we were what when where which while who whom why will with would you your " +
    "yours about above after again against all also am any because before below between both during each few " +
    "further more most other s t only nor"
  ).split(" "),
);

/** Most words of a query that are used; longer queries keep their first distinct words. */
export const MAX_QUERY_WORDS = 32;

/** Lowercase, without diacritics (NFKD, combining marks dropped), compatibility-folded. */
export function fold(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase();
}

/** The words of a text: runs of letters and digits, folded. */
export function words(text: string): string[] {
  return fold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Words without stop words; a text made only of stop words keeps them all. */
export function contentWords(text: string): string[] {
  const all = words(text);
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return content.length > 0 ? content : all;
}

/** Distinct content words of a query, in order, at most MAX_QUERY_WORDS. */
export function queryWords(query: string): string[] {
  return [...new Set(contentWords(query))].slice(0, MAX_QUERY_WORDS);
}

/**
 * An FTS5 query matching any of the words (OR): BM25 then ranks memories that hold more of
 * the rarer words first. Each word is a quoted string, so no input is read as FTS5 syntax;
 * the porter tokenizer stems it like the indexed text.
 */
export function wordMatchQuery(terms: readonly string[]): string | null {
  return terms.length === 0 ? null : terms.map((w) => `"${w}"`).join(" OR ");
}

// Endings stripped by `lightStem`, longest first.
const SUFFIXES = ["ments", "ment", "ings", "ing", "ions", "ion", "ed", "es", "ly", "s"];

/**
 * A light English stemmer for comparing texts: strips one common ending (keeping at least 3
 * characters), a final "e" and a doubled final consonant, so prefers / preferred / prefer,
 * store / stores / stored and deploy / deploying / deployment meet, while contract and
 * contrast, mode and model stay apart.
 */
export function lightStem(word: string): string {
  let w = word;
  for (const suffix of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  if (w.length >= 4 && w.endsWith("e")) w = w.slice(0, -1);
  const last = w.charAt(w.length - 1);
  if (w.length >= 4 && last === w.charAt(w.length - 2) && !"aeiou".includes(last)) w = w.slice(0, -1);
  return w;
}

/**
 * Consolidate's view of a text: the set of its content words, lightly stemmed. Word order,
 * punctuation, case, accents, function words and word forms do not matter.
 */
export function stemSet(text: string): Set<string> {
  return new Set(contentWords(text).map(lightStem));
}

/** The text reduced to its folded words, for exact-duplicate detection. */
export function normalizedText(text: string): string {
  return words(text).join(" ");
}
