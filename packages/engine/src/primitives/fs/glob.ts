import { invalid } from "@prim/wire";

/** Longest pattern, in characters. */
export const MAX_PATTERN_CHARS = 1024;
/** Most patterns one `{a,b}` expansion may produce (`{a,b}{c,d}` makes 4). */
export const MAX_BRACE_EXPANSIONS = 256;

type Token = { kind: "char"; char: string } | { kind: "any" } | { kind: "star" } | { kind: "class"; test: ClassTest };
type ClassTest = (char: string) => boolean;
/** One pattern segment: `**` (any number of path segments) or the tokens of one name. */
type Segment = "**" | Token[];

/**
 * A compiled glob. Patterns are matched segment by segment with a small matcher instead of
 * being turned into one regular expression: a regex made of many `*` backtracks
 * exponentially on long names, while this matcher stays within (pattern × name) steps.
 *
 * Syntax: `*` any run of characters within a name, `**` as a whole segment any number of
 * directories, `?` one character, `[abc]`, `[a-z]`, `[!a-z]` or `[^a-z]` one character of a
 * class, `{a,b}` alternatives (may nest and contain `/`), `\` escapes the next character.
 * Matching is case-sensitive and `*` also matches names starting with a dot.
 */
export class Glob {
  private readonly alternatives: Segment[][];
  /** The directory every match lies below: the literal leading segments shared by all alternatives. */
  readonly base: string;

  constructor(pattern: string) {
    if (pattern.length === 0) throw invalid("pattern: must not be empty");
    if (pattern.length > MAX_PATTERN_CHARS) throw invalid(`pattern: at most ${MAX_PATTERN_CHARS} characters`);
    this.alternatives = expandBraces(pattern).map(compileSegments);
    this.base = commonBase(this.alternatives);
  }

  /** Whether a canonical path (`/a/b.txt`) matches. */
  matches(path: string): boolean {
    const names = path === "/" ? [] : path.slice(1).split("/");
    return this.alternatives.some((segments) => matchPath(segments, names));
  }
}

/** `a{b,c{d,e}}f` → `abf`, `acdf`, `acef`. An unclosed `{` is a 400. */
function expandBraces(pattern: string): string[] {
  const open = findUnescaped(pattern, "{", 0);
  if (open === -1) {
    if (findUnescaped(pattern, "}", 0) !== -1) throw invalid("pattern: unmatched '}'");
    return [pattern];
  }
  let depth = 0;
  let start = open + 1;
  const options: string[] = [];
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      i++;
    } else if (c === "{") {
      depth++;
    } else if (c === "}" && --depth === 0) {
      options.push(pattern.slice(start, i));
      const head = pattern.slice(0, open);
      const out: string[] = [];
      for (const tail of expandBraces(pattern.slice(i + 1))) {
        for (const option of options) {
          for (const inner of expandBraces(option)) {
            out.push(head + inner + tail);
            if (out.length > MAX_BRACE_EXPANSIONS) {
              throw invalid(`pattern: braces expand to more than ${MAX_BRACE_EXPANSIONS} patterns`);
            }
          }
        }
      }
      return out;
    } else if (c === "," && depth === 1) {
      options.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  throw invalid("pattern: unclosed '{'");
}

function findUnescaped(text: string, char: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === char) return i;
  }
  return -1;
}

/** A brace-free pattern as segments; a leading `/` is optional (patterns are rooted). */
function compileSegments(pattern: string): Segment[] {
  const segments: Segment[] = [];
  for (const part of splitUnescaped(pattern)) {
    if (part === "" || part === ".") continue;
    if (part === "**") {
      if (segments[segments.length - 1] !== "**") segments.push("**");
      continue;
    }
    segments.push(tokenize(part));
  }
  return segments;
}

/** Splits on `/`, leaving escaped characters (and class contents) for the tokenizer. */
function splitUnescaped(pattern: string): string[] {
  const parts: string[] = [];
  let current = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "\\" && i + 1 < pattern.length) {
      current += c + pattern[++i];
    } else if (c === "/") {
      parts.push(current);
      current = "";
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function tokenize(segment: string): Token[] {
  const chars = Array.from(segment);
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === "\\" && i + 1 < chars.length) {
      tokens.push({ kind: "char", char: chars[++i] as string });
    } else if (c === "*") {
      // `a**b` inside a name is just `*`; runs of stars collapse.
      if (tokens[tokens.length - 1]?.kind !== "star") tokens.push({ kind: "star" });
    } else if (c === "?") {
      tokens.push({ kind: "any" });
    } else if (c === "[") {
      const parsed = parseClass(chars, i);
      tokens.push({ kind: "class", test: parsed.test });
      i = parsed.end;
    } else {
      tokens.push({ kind: "char", char: c });
    }
  }
  return tokens;
}

/** `[...]` starting at `chars[start]`; `]` right after `[` or `[!` is a literal member. */
function parseClass(chars: string[], start: number): { test: ClassTest; end: number } {
  let i = start + 1;
  const negate = chars[i] === "!" || chars[i] === "^";
  if (negate) i++;
  const ranges: [string, string][] = [];
  let first = true;
  for (; i < chars.length; i++) {
    let c = chars[i] as string;
    if (c === "]" && !first) {
      const test: ClassTest = (ch) => ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== negate;
      return { test, end: i };
    }
    first = false;
    if (c === "\\" && i + 1 < chars.length) c = chars[++i] as string;
    if (chars[i + 1] === "-" && i + 2 < chars.length && chars[i + 2] !== "]") {
      let hi = chars[i + 2] as string;
      i += 2;
      if (hi === "\\" && i + 1 < chars.length) hi = chars[++i] as string;
      if (hi < c) throw invalid(`pattern: range '${c}-${hi}' is out of order`);
      ranges.push([c, hi]);
    } else {
      ranges.push([c, c]);
    }
  }
  throw invalid("pattern: unclosed '['");
}

/** Literal leading directories shared by every alternative (`src/lib/**` → `/src/lib`). */
function commonBase(alternatives: Segment[][]): string {
  let shared: string[] | null = null;
  for (const segments of alternatives) {
    const literal: string[] = [];
    // The last segment is what matches; only the directories before it narrow the scan.
    for (const segment of segments.slice(0, -1)) {
      if (segment === "**" || segment.some((t) => t.kind !== "char")) break;
      literal.push(segment.map((t) => (t.kind === "char" ? t.char : "")).join(""));
    }
    if (shared === null) {
      shared = literal;
    } else {
      let n = 0;
      while (n < shared.length && n < literal.length && shared[n] === literal[n]) n++;
      shared = shared.slice(0, n);
    }
  }
  return `/${(shared ?? []).join("/")}`;
}

/** Segment-level match with memo: `**` consumes zero or more names. */
function matchPath(segments: Segment[], names: string[]): boolean {
  const memo = new Map<number, boolean>();
  const at = (si: number, ni: number): boolean => {
    const key = si * (names.length + 1) + ni;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    const segment = segments[si];
    if (segment === undefined) {
      result = ni === names.length;
    } else if (segment === "**") {
      result = false;
      for (let skip = ni; skip <= names.length && !result; skip++) result = at(si + 1, skip);
    } else {
      const name = names[ni];
      result = name !== undefined && matchName(segment, Array.from(name)) && at(si + 1, ni + 1);
    }
    memo.set(key, result);
    return result;
  };
  return at(0, 0);
}

/**
 * Wildcard match of one name: the classic greedy scan that, on a mismatch, retries from the
 * last `*` one character further. It never revisits more than (tokens × chars) positions.
 */
function matchName(tokens: Token[], chars: string[]): boolean {
  let t = 0;
  let c = 0;
  let starToken = -1;
  let starChar = 0;
  while (c < chars.length) {
    const token = tokens[t];
    if (token !== undefined && token.kind === "star") {
      starToken = t++;
      starChar = c;
    } else if (token !== undefined && single(token, chars[c] as string)) {
      t++;
      c++;
    } else if (starToken !== -1) {
      t = starToken + 1;
      c = ++starChar;
    } else {
      return false;
    }
  }
  while (tokens[t]?.kind === "star") t++;
  return t === tokens.length;
}

function single(token: Token, char: string): boolean {
  if (token.kind === "char") return token.char === char;
  if (token.kind === "any") return true;
  if (token.kind === "class") return token.test(char);
  return false;
}
