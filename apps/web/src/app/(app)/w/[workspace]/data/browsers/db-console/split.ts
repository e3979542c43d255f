/**
 * SQL text as SQLite reads it, cut into statements at the semicolons that end one: not inside a
 * string ('…', '' escapes a quote), a quoted identifier ("…", `…`, […]), a comment (-- to the
 * end of the line, /* … *\/) or a trigger's BEGIN … END body (CASE … END counted inside it).
 * Statements holding only whitespace and comments are dropped; each keeps its own text, trimmed.
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  /** Whether the current statement has anything besides whitespace and comments. */
  let code = false;
  /** Words of the current statement's beginning (to tell CREATE [TEMP] TRIGGER). */
  const head: string[] = [];
  /** BEGIN/CASE … END nesting inside a trigger. */
  let depth = 0;
  const end = (at: number) => {
    if (code) out.push(sql.slice(start, at).trim());
    start = at + 1;
    code = false;
    head.length = 0;
    depth = 0;
  };
  const isTrigger = () => {
    const words = head[0] === "CREATE" ? head.slice(1) : [];
    if (words[0] === "TEMP" || words[0] === "TEMPORARY") words.shift();
    return words[0] === "TRIGGER";
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2);
      i = close === -1 ? sql.length : close + 2;
    } else if (c === "'" || c === '"' || c === "`" || c === "[") {
      const quote = c === "[" ? "]" : c;
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) break;
        if (sql[j] === quote) {
          // A doubled quote is an escaped one, except for [ … ] identifiers.
          if (quote !== "]" && sql[j + 1] === quote) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      code = true;
      i = j + 1;
    } else if (c === ";") {
      if (depth > 0) {
        i++;
      } else {
        end(i);
        i++;
      }
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i, i + 256))?.[0] ?? c;
      const upper = word.toUpperCase();
      code = true;
      if (head.length < 3) head.push(upper);
      if (isTrigger()) {
        if (upper === "BEGIN" || (upper === "CASE" && depth > 0)) depth++;
        else if (upper === "END" && depth > 0) depth--;
      }
      i += word.length;
    } else {
      if (!/\s/.test(c)) code = true;
      i++;
    }
  }
  end(sql.length);
  return out;
}
