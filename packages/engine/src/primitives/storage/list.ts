import type { ObjectInfo, ObjectPage } from "@prim/wire";
import { z } from "zod";
import { decodeCursor, encodeCursor } from "../../core/pagination.js";
import type { StorageStore } from "./store.js";
import { toInfo } from "./store.js";

export type { ObjectPage };

// The cursor holds the scan position and its lower bound (past a rolled-up prefix).
const cursorSchema = z.object({ a: z.string(), f: z.string() });

/** The smallest string greater than every string starting with `prefix` (for skipping). */
function after(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

/**
 * Objects in key order; with a delimiter, keys that continue past it after the prefix are
 * rolled up into common `prefixes` (each counted once against `limit`, like an object).
 */
export function listObjects(
  store: StorageStore,
  opts: { prefix: string; delimiter?: string | undefined; cursor?: string | undefined; limit: number },
): ObjectPage {
  const data: ObjectInfo[] = [];
  const prefixes: string[] = [];
  const resume = opts.cursor === undefined ? { a: "", f: opts.prefix } : decodeCursor(opts.cursor, cursorSchema);
  let position = resume.a;
  let from = resume.f < opts.prefix ? opts.prefix : resume.f;
  let more = false;
  scan: for (;;) {
    const rows = store.scan(position, from, opts.limit + 1);
    if (rows.length === 0) break;
    for (const row of rows) {
      if (!row.key.startsWith(opts.prefix)) break scan;
      if (data.length + prefixes.length === opts.limit) {
        more = true;
        break scan;
      }
      const rest = row.key.slice(opts.prefix.length);
      const cut = opts.delimiter === undefined ? -1 : rest.indexOf(opts.delimiter);
      if (cut === -1) {
        data.push(toInfo(row));
        position = row.key;
        continue;
      }
      const common = opts.prefix + rest.slice(0, cut + (opts.delimiter as string).length);
      prefixes.push(common);
      // Skip every other key under this common prefix, then scan on from there.
      position = common;
      from = after(common);
      continue scan;
    }
    if (rows.length <= opts.limit) break;
  }
  return { data, prefixes, next_cursor: more ? encodeCursor({ a: position, f: from }) : null };
}
