import { isUtf8 } from "node:buffer";
import type { SearchHit } from "@prim/wire";
import { invalid } from "@prim/wire";
import type { Statement } from "better-sqlite3";
import { MAX_INDEXED_BYTES, subtreeBounds } from "./limits.js";
import type { FsStore } from "./store.js";

export type { SearchHit };

/** Words of context a snippet holds around the hit. */
const SNIPPET_TOKENS = 12;

/**
 * Collects a copy of an upload's first bytes while it streams through, so a text file can be
 * indexed without reading its blob back. It stops keeping bytes past the indexing limit.
 */
export class TextSample {
  private chunks: Buffer[] = [];
  private size = 0;

  async *tap(source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>): AsyncIterable<Buffer> {
    for await (const chunk of source) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      this.size += buf.length;
      if (this.size <= MAX_INDEXED_BYTES) this.chunks.push(buf);
      else this.chunks = [];
      yield buf;
    }
  }

  /** The whole upload as text when it is indexable: at most 1 MiB of UTF-8 without NUL bytes. */
  text(): string | null {
    if (this.size === 0 || this.size > MAX_INDEXED_BYTES) return null;
    const bytes = Buffer.concat(this.chunks);
    if (!isUtf8(bytes) || bytes.includes(0)) return null;
    return bytes.toString("utf8");
  }
}

/**
 * `q` is plain words, not FTS5 syntax: each word separated by whitespace or control characters
 * becomes a quoted phrase (so quotes, `OR`, `NEAR` or `-` cannot make a syntax error, and a NUL,
 * which ends an FTS5 query string early, is a separator) and every word must appear. A word
 * ending in `*` matches as a prefix.
 */
export function toMatchQuery(q: string): string {
  const phrases: string[] = [];
  for (const word of q.split(/[\s\p{Cc}]+/u)) {
    const prefix = word.length > 1 && word.endsWith("*");
    const bare = prefix ? word.slice(0, -1) : word;
    if (!/[\p{L}\p{N}]/u.test(bare)) continue;
    phrases.push(`"${bare.replace(/"/g, '""')}"${prefix ? "*" : ""}`);
  }
  if (phrases.length === 0) throw invalid("q: must contain at least one word");
  return phrases.join(" ");
}

/** Full-text search over the indexed text files at or below a path, best matches first. */
export class FsSearch {
  private readonly query: Statement;

  constructor(store: FsStore) {
    this.query = store.db.prepare(
      `SELECT e.path AS path, snippet(entries_fts, 0, '**', '**', '…', ${SNIPPET_TOKENS}) AS snippet
       FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
       WHERE entries_fts MATCH @match AND (e.path = @path OR (e.path > @lo AND e.path < @hi))
       ORDER BY rank LIMIT @limit`,
    );
  }

  search(q: string, path: string, limit: number): SearchHit[] {
    return this.query.all({ match: toMatchQuery(q), path, ...subtreeBounds(path), limit }) as SearchHit[];
  }
}
