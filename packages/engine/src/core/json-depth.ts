/**
 * How deep a JSON request body may nest arrays and objects, counting the body itself (so a kv
 * value inside `{ "value": … }` has 127 levels of its own). 128 is serde_json's default: far
 * beyond any real document, and far below the ~5,000 levels at which V8's recursive
 * `JSON.stringify` (and every other recursive walk: zod, structured clone, SQLite's JSON
 * functions) overflows the stack. Checked once, at the edge, on the request's text.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when JSON text nests arrays/objects deeper than `max`. One pass over the text with a
 * counter (no recursion, so the check cannot overflow the stack it protects); string contents
 * are skipped with `indexOf`, so a large string value costs a native scan, not a JS loop.
 * Invalid JSON is judged by its brackets alone; the parser reports what else is wrong.
 */
export function jsonNestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote closing the string opened at `open` (the text's end if unterminated). */
function endOfString(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return text.length;
    // A quote is escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}
