import { invalid, type Page } from "@prim/wire";
import { z } from "zod";

export type { Page } from "@prim/wire";

export interface PageSize {
  default: number;
  max: number;
}

/** Most lists: default 50, maximum 200. */
export const LIST_PAGE: PageSize = { default: 50, max: 200 };
/** Key and object listings: default 100, maximum 1,000. */
export const KEY_PAGE: PageSize = { default: 100, max: 1000 };

/** Query-string `limit`: an integer from 1 to the list's maximum. */
export function limitSchema(size: PageSize) {
  return z.coerce
    .number()
    .int(`must be an integer from 1 to ${size.max}`)
    .min(1, `must be an integer from 1 to ${size.max}`)
    .max(size.max, `must be an integer from 1 to ${size.max}`)
    .default(size.default);
}

/** Cursors are opaque to callers: base64url of a small JSON position. */
export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
}

/** Decodes a cursor and checks its shape; a tampered or foreign cursor is a 400. */
export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through to the error below
  }
  throw invalid("cursor: not a cursor returned by this list");
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only tells that another page
 * exists, and the cursor points after the last row returned.
 */
export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T, position: (row: R) => unknown): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(map),
    next_cursor: hasMore && last !== undefined ? encodeCursor(position(last)) : null,
  };
}

/** Query-string booleans: `true`/`1` and `false`/`0`. */
export const queryBoolean = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0"])])
  .transform((v) => v === true || v === "true" || v === "1");
