import type { ChangeEntry, ChangePage } from "@prim/wire";
import { seg } from "./primitive-client.js";
import type { Transport } from "./transport.js";

/** Whose changes: one primitive (id), or every primitive of a group (name or id). */
export type ChangeTarget = { primitive: string } | { group: string };

export interface ChangeReadOptions {
  /** Continue after this cursor (an answer's `cursor`, or an entry's); default: the oldest change held. */
  after?: string;
  /** Entries per read (default 100, at most 1,000). */
  limit?: number;
  /** How long a read waits for a change when there is none (`"20s"`, at most 30 s). */
  wait?: string | number;
  signal?: AbortSignal;
}

function pathOf(target: ChangeTarget): string {
  return "primitive" in target
    ? `/v1/primitives/${seg(target.primitive)}/changes`
    : `/v1/groups/${seg(target.group)}/changes`;
}

/** One read of a change feed (`GET …/changes`). */
export function readChanges(
  transport: Transport,
  target: ChangeTarget,
  options: ChangeReadOptions = {},
): Promise<ChangePage> {
  const { signal, ...query } = options;
  return transport.request("GET", pathOf(target), { query: { ...query }, signal });
}

/**
 * Changes as they commit: reads again and again (long polls of `wait`, default 20 s), yielding
 * each entry in order. Every entry carries the `cursor` right after it: keep the last one
 * handled and pass it as `after` to resume exactly there (after a crash or a deploy). Ends,
 * without an error, when `signal` aborts; a cursor past the retention window throws the 409.
 */
export async function* iterateChanges(
  transport: Transport,
  target: ChangeTarget,
  options: ChangeReadOptions = {},
): AsyncGenerator<ChangeEntry> {
  const { signal } = options;
  let after = options.after;
  while (signal?.aborted !== true) {
    let page: ChangePage;
    try {
      page = await readChanges(transport, target, { wait: "20s", ...options, ...(after ? { after } : {}) });
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    for (const entry of page.data) {
      yield entry;
      after = entry.cursor;
    }
    after = page.cursor;
  }
}
