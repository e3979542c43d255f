// JSON typed into the data browser's editors: parsed, or the first error with its line and column.

export type Parsed =
  | { ok: true; value: unknown }
  | { ok: false; message: string; offset: number; line: number; column: number };

/**
 * `text` parsed as JSON (JSON.parse's own answer), or where and why it is not JSON (a small
 * scanner finds the first error, as browsers word JSON.parse's message differently).
 */
export function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const found = scan(text) ?? { offset: text.length, message: (err as Error).message };
    const before = text.slice(0, found.offset).split("\n");
    return {
      ok: false,
      message: found.message,
      offset: found.offset,
      line: before.length,
      column: (before.at(-1)?.length ?? 0) + 1,
    };
  }
}

/** A value as the editors show it: two-space indented JSON. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

/** UTF-8 bytes of a value's JSON (what the engine stores for a JSON value). */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? "").length;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** The first error in `text` as JSON, or null when the scanner finds none. */
function scan(text: string): { offset: number; message: string } | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++;
  };
  const fail = (message: string): never => {
    throw new Stop(i, i >= text.length ? "Unexpected end of input" : message);
  };
  const show = () => JSON.stringify(text[i] ?? "");
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`Unexpected ${show()}`);
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail("Control character in a string (escape it)");
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("Bad \\u escape");
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? "x")) fail("Bad escape");
      }
      i++;
    }
    if (i >= text.length) fail("Unterminated string");
    i++;
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (match === null || match[0] === "" || match[0] === "-") fail(`Unexpected ${show()}`);
    i += (match as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("Expected a property name in double quotes");
        string();
        ws();
        if (text[i] !== ":") fail("Expected ':' after the property name");
        i++;
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail("Expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail("Expected ',' or ']'");
      }
    }
    if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c !== undefined && /[-\d]/.test(c)) number();
    else fail(`Unexpected ${show()}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`Unexpected ${show()} after the value`);
    return null;
  } catch (err) {
    if (err instanceof Stop) return { offset: err.offset, message: err.message };
    throw err;
  }
}
