import { type ChangeEntry, type ChangePage, type Principal, READ_TOOL, ServiceError, toolAllowed } from "@prim/wire";
import { z } from "zod";
import type { PrimitiveRecord } from "../catalog/catalog.js";
import { KEY_PAGE, limitSchema } from "../core/pagination.js";
import { decodeGroupCursor, encodeGroupCursor, type GroupCursor } from "../primitives/changes/cursor.js";
import { type LogSource, oldestCursor, readFrom, startCursor, startOf } from "../primitives/changes/read.js";
import { groupOp, type OpContext, primitiveOp } from "../primitives/operation.js";
import { boundedDuration, MAX_WAIT_MS } from "../primitives/queue/limits.js";
import type { EngineServices } from "../primitives/services.js";

/**
 * Reading change feeds (primitives/changes/): one primitive's log, or a group's logs merged.
 * A read that finds nothing may wait (`wait`, like a queue receive's long poll): it parks until a
 * commit to one of the logs it reads wakes it — never polls — or its deadline passes.
 */
const readInput = z.strictObject({
  after: z.string().min(1).max(65_536).optional(),
  limit: limitSchema(KEY_PAGE),
  wait: boundedDuration(0, MAX_WAIT_MS, "wait").default(0),
});
type ReadInput = z.output<typeof readInput>;

/** The primitive's log, or null once the engine is closing. */
async function sourceOf(services: EngineServices, p: PrimitiveRecord): Promise<LogSource | null> {
  const log = await services.files.changeLog(p.id, p.type);
  return log === null ? null : { id: p.id, type: p.type, log };
}

/** Waits for a commit to one of `ids` until `deadline` (ms, real time); false when none came. */
function waitFor(ctx: OpContext, ids: ReadonlySet<string>, deadline: number): Promise<boolean> {
  return ctx.services.files.changeSignals.wait(ids, deadline - Date.now(), ctx.signal);
}

/** Whether a primitive's changes may be read: `changes_read`, or the tool that reads its type. */
function mayRead(principal: Principal, p: PrimitiveRecord): boolean {
  return toolAllowed(principal, "changes_read") || toolAllowed(principal, READ_TOOL[p.type]);
}

export const changesRead = primitiveOp({
  name: "changes.read",
  access: "read",
  tool: (p) => ["changes_read", READ_TOOL[p.type]],
  audited: true,
  metered: true,
  writesStorage: false,
  refusedWhilePaused: true,
  input: readInput,
  async run(ctx, input): Promise<ChangePage> {
    const { services, primitive: p } = ctx;
    ctx.audit.target = null;
    const deadline = Date.now() + input.wait;
    let after = input.after;
    for (;;) {
      const source = await sourceOf(services, p);
      if (source === null) return { data: [], cursor: after ?? "" };
      const read = readFrom(source, startOf(source, after), input.limit);
      after = read.cursor;
      if (read.entries.length > 0 || !(await waitFor(ctx, new Set([p.id]), deadline))) {
        return { data: read.entries, cursor: read.cursor };
      }
      // Woken by a commit; a primitive deleted meanwhile answers what it had.
      if ((await services.catalog.getPrimitive(p.id)) === null) return { data: [], cursor: read.cursor };
    }
  },
});

export const changesGroup = groupOp({
  name: "changes.group",
  access: "read",
  audited: true,
  metered: true,
  writesStorage: false,
  input: readInput,
  async run(ctx, input): Promise<ChangePage> {
    const { group } = ctx;
    ctx.audit.target = null;
    const cursor: GroupCursor =
      input.after === undefined ? { group: group.id, parts: new Map() } : decodeGroupCursor(input.after, group.id);
    const deadline = Date.now() + input.wait;
    for (;;) {
      const sources = await groupSources(ctx, group.id);
      const page = await mergedRead(sources, cursor, input);
      if (page.data.length > 0 || !(await waitFor(ctx, new Set(sources.map((s) => s.id)), deadline))) return page;
    }
  },
});

/** The group's primitives whose changes the caller may read, each with its log. */
async function groupSources(ctx: OpContext, groupId: string): Promise<LogSource[]> {
  const out: LogSource[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await ctx.services.catalog.listPrimitives({ groupId, limit: 500, ...(after ? { after } : {}) });
    for (const p of page) {
      if (!mayRead(ctx.principal, p)) continue;
      const source = await sourceOf(ctx.services, p);
      if (source !== null) out.push(source);
    }
    if (page.length < 500) return out;
    after = page.at(-1)?.id;
  }
}

/**
 * The group's changes after `cursor`: each primitive's in commit order, merged by commit time
 * (a primitive's own order is never broken). The cursor keeps each primitive's position; a part
 * naming a primitive no longer in the group (deleted, moved, or never there) is dropped.
 */
async function mergedRead(sources: LogSource[], cursor: GroupCursor, input: ReadInput): Promise<ChangePage> {
  const parts = new Map<string, string>();
  const reads: { source: LogSource; entries: ChangeEntry[] }[] = [];
  for (const source of sources) {
    const given = cursor.parts.get(source.id);
    let start: ReturnType<typeof startOf>;
    try {
      start = startOf(source, given, "after");
    } catch (err) {
      throw groupCursorError(err, cursor, source);
    }
    const read = readFrom(source, start, input.limit);
    parts.set(source.id, given ?? startCursor(source, start));
    reads.push({ source, entries: read.entries });
  }
  const data: ChangeEntry[] = [];
  const heads = reads.map(() => 0);
  while (data.length < input.limit) {
    let pick = -1;
    for (let i = 0; i < reads.length; i++) {
      const entry = reads[i]?.entries[heads[i] as number];
      if (entry === undefined) continue;
      const best = pick < 0 ? undefined : reads[pick]?.entries[heads[pick] as number];
      if (best === undefined || entry.ts < best.ts) pick = i;
    }
    if (pick < 0) break;
    const entry = reads[pick]?.entries[heads[pick] as number] as ChangeEntry;
    heads[pick] = (heads[pick] as number) + 1;
    parts.set(entry.primitive, entry.cursor);
    data.push({ ...entry, cursor: encodeGroupCursor({ group: cursor.group, parts }) });
  }
  // Each entry's cursor is the group's position right after it; the page's, after the last.
  return { data, cursor: encodeGroupCursor({ group: cursor.group, parts }) };
}

/** A part the primitive refused: 400 for the group, or 409 naming the group cursor still held. */
function groupCursorError(err: unknown, cursor: GroupCursor, source: LogSource): unknown {
  if (!(err instanceof ServiceError)) return err;
  if (err.code !== "conflict") {
    return new ServiceError("invalid_request", "after: not a change cursor of this group");
  }
  const held = new Map(cursor.parts);
  held.set(source.id, oldestCursor(source));
  const why = err.message.includes("restored")
    ? "was restored from a snapshot since"
    : "has changes past the retention window";
  return new ServiceError(
    "conflict",
    `after: primitive ${source.id} ${why}; the oldest cursor still held is '${encodeGroupCursor({ group: cursor.group, parts: held })}'`,
  );
}
