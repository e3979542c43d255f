import { encodeCursor, type Page, toPage } from "./pagination.js";

/**
 * Most bytes one multi-item answer carries (a page of a listing, an mget, a queue receive).
 * Paged lists end their page early at this size and hand out `next_cursor` as usual; `kv.mget`
 * answers the keys that fit, in request order, and says `truncated: true`; a receive leases
 * fewer jobs than `max`. Without it, 1,000 kv values of 1 MiB made one 1.3 GB answer. 8 MiB
 * keeps a page to tens of milliseconds of serialising while still holding 8 of the largest kv
 * values, 32 of the largest queue bodies, or ~170 of the largest memories.
 */
export const MAX_RESPONSE_BYTES_PER_CALL = 8 * 1024 * 1024;

/** What an item's fields other than its big value add to the answer (keys, ids, times). */
export const ITEM_OVERHEAD_BYTES = 256;

/**
 * Counts the estimated bytes of an answer as items join it. The first item always fits (one
 * item is never larger than its own limit, and a page must make progress); each later item
 * fits while the total stays within the cap. Sizes come from the stored lengths (SQL
 * `octet_length`), so an item that will not fit is known before its value is read.
 */
export class ResponseBudget {
  private used = 0;
  private items = 0;
  /** Set once an item did not fit: the answer is cut short (a page ends, an mget truncates). */
  cut = false;

  constructor(private readonly maxBytes: number = MAX_RESPONSE_BYTES_PER_CALL) {}

  /** Bytes a next item may take and still fit (unbounded for the first). */
  get room(): number {
    return this.items === 0 ? Number.MAX_SAFE_INTEGER : Math.max(0, this.maxBytes - this.used);
  }

  /** Adds an item of `bytes` if it fits; false (and nothing counted) when it does not. */
  take(bytes: number): boolean {
    if (bytes > this.room) {
      this.cut = true;
      return false;
    }
    this.used += bytes;
    this.items++;
    return true;
  }
}

/**
 * A page of rows read under a budget: cut short, it points after its last row even though it
 * holds `limit` rows or fewer; otherwise the usual `limit + 1` rule applies.
 */
export function budgetedPage<R, T>(
  rows: R[],
  limit: number,
  budget: ResponseBudget,
  map: (row: R) => T,
  position: (row: R) => unknown,
): Page<T> {
  if (!budget.cut) return toPage(rows, limit, map, position);
  const last = rows[rows.length - 1];
  return { data: rows.map(map), next_cursor: last === undefined ? null : encodeCursor(position(last)) };
}

/** Bytes of `n` stored bytes once base64-encoded in JSON. */
export const base64Bytes = (n: number) => Math.ceil(n / 3) * 4;
