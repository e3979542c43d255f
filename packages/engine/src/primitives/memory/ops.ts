import type { MemoryVersion, RecalledMemory } from "@prim/wire";
import { notFound, ServiceError } from "@prim/wire";
import { z } from "zod";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, queryBoolean } from "../../core/pagination.js";
import { budgetedPage, ResponseBudget } from "../../core/response-budget.js";
import { type AnyOperation, dataOp } from "../operation.js";
import { memoryIdOf, toVersion, type VersionRow, versionBytes } from "./history.js";
import {
  CONSOLIDATE_THRESHOLD,
  checkText,
  encodeMetadata,
  kindSchema,
  MAX_QUERY_CHARS,
  MAX_RECALL_KINDS,
  metadataSchema,
  ownerSchema,
  RECALL_LIMIT,
  tagSchema,
  tagsSchema,
  textSchema,
} from "./limits.js";
import { answerBytes, type MemoryRecord, toRecord } from "./record.js";
import type { ConsolidateResult, MemoryStore } from "./store.js";

export type { RecalledMemory };

const memoryOp = dataOp<MemoryStore>("memory");

/** Memory ids in paths; an id of another shape is simply not found. */
const idSchema = z.string().min(1, "must not be empty");

const cursorSchema = z.object({ s: z.number().int() });
const historyCursorSchema = z.object({ v: z.number().int() });

/** A time in ms since the epoch (as every time the service answers). */
const msSchema = z.coerce.number().int("must be an integer (ms since the epoch)").min(0, "must be 0 or more");

export const memoryRemember = memoryOp({
  name: "memory.remember",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "memory_remember",
  input: z.strictObject({
    kind: kindSchema,
    text: textSchema,
    tags: tagsSchema.optional(),
    owner: ownerSchema.optional(),
    metadata: metadataSchema.optional(),
    /** An existing memory to change (a new version) rather than a new memory. */
    id: idSchema.optional(),
    /** With `id`: change it only if it is at this version (else 412 `precondition_failed`). */
    if_version: z.coerce.number().int("must be an integer").min(1, "must be 1 or more").optional(),
  }),
  async run(ctx, input): Promise<MemoryRecord> {
    checkText(input.text);
    const metadata = input.metadata === undefined ? undefined : encodeMetadata(input.metadata);
    const store = ctx.store;
    if (input.if_version !== undefined && input.id === undefined) {
      throw new ServiceError("invalid_request", "if_version: needs the id of the memory to change");
    }
    if (input.id !== undefined) ctx.audit.target = input.id;
    const { record, embedded } =
      input.id === undefined
        ? await store.remember({
            kind: input.kind,
            text: input.text,
            tags: input.tags ?? [],
            owner: input.owner ?? null,
            metadata: metadata ?? "{}",
          })
        : await store.update(
            input.id,
            { kind: input.kind, text: input.text, tags: input.tags, owner: input.owner, metadata },
            input.if_version,
          );
    ctx.audit.target = record.id;
    const detail: Record<string, unknown> = { kind: record.kind };
    if (input.id !== undefined) detail.version = record.version;
    if (store.hasEmbedder) detail.embedded = embedded;
    ctx.audit.detail = detail;
    return record;
  },
});

export const memoryList = memoryOp({
  name: "memory.list",
  access: "read",
  writesStorage: false,
  tool: "memory_recall",
  input: z.strictObject({
    kind: kindSchema.optional(),
    tag: tagSchema.optional(),
    owner: ownerSchema.optional(),
    cursor: z.string().optional(),
    limit: limitSchema(LIST_PAGE),
  }),
  run(ctx, input): Page<MemoryRecord> {
    const before = input.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(input.cursor, cursorSchema).s;
    // A page ends early at the response budget; next_cursor continues it.
    const budget = new ResponseBudget();
    const rows = ctx.store.list(input, before, input.limit, budget);
    return budgetedPage(rows, input.limit, budget, toRecord, (row) => ({ s: row.seq }));
  },
});

export const memoryGet = memoryOp({
  name: "memory.get",
  access: "read",
  writesStorage: false,
  tool: "memory_recall",
  input: z.strictObject({ id: idSchema }),
  run(ctx, input): MemoryRecord {
    ctx.audit.target = input.id;
    const record = ctx.store.get(input.id);
    if (record === null) throw notFound(`memory '${input.id}'`);
    return record;
  },
});

export const memoryForget = memoryOp({
  name: "memory.forget",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "memory_forget",
  input: z.strictObject({ id: idSchema }),
  async run(ctx, input): Promise<{ id: string; deleted: true }> {
    ctx.audit.target = input.id;
    if (!(await ctx.store.forget(input.id))) throw notFound(`memory '${input.id}'`);
    return { id: input.id, deleted: true };
  },
});

export const memorySupersede = memoryOp({
  name: "memory.supersede",
  access: "write",
  destructive: true,
  idempotent: false,
  writesStorage: true,
  tool: "memory_forget",
  input: z.strictObject({
    id: idSchema,
    text: textSchema,
    kind: kindSchema.optional(),
    tags: tagsSchema.optional(),
    metadata: metadataSchema.optional(),
  }),
  async run(ctx, input): Promise<MemoryRecord> {
    ctx.audit.target = input.id;
    checkText(input.text);
    const metadata = input.metadata === undefined ? undefined : encodeMetadata(input.metadata);
    const record = await ctx.store.supersede(input.id, {
      text: input.text,
      kind: input.kind,
      tags: input.tags,
      metadata,
    });
    ctx.audit.detail = { superseded_by: record.id };
    return record;
  },
});

export const memoryRecall = memoryOp({
  name: "memory.recall",
  access: "read",
  writesStorage: false,
  tool: "memory_recall",
  input: z.strictObject({
    query: z
      .string()
      .max(MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`)
      .refine((q) => q.trim() !== "", "must not be empty"),
    kinds: z.array(kindSchema).max(MAX_RECALL_KINDS, `at most ${MAX_RECALL_KINDS} kinds`).optional(),
    tags: tagsSchema.optional(),
    owner: ownerSchema.optional(),
    limit: z
      .number()
      .int(`must be an integer from 1 to ${RECALL_LIMIT.max}`)
      .min(1, `must be an integer from 1 to ${RECALL_LIMIT.max}`)
      .max(RECALL_LIMIT.max, `must be an integer from 1 to ${RECALL_LIMIT.max}`)
      .default(RECALL_LIMIT.default),
    include_superseded: queryBoolean.default(false),
    /** Only memories created at or after this time (ms). */
    since: msSchema.optional(),
    /** Only memories created at or before this time (ms). */
    until: msSchema.optional(),
    /** Memories as they were at this time (ms): see filter.ts. */
    as_of: msSchema.optional(),
    /** Leave out hits scoring below this (0..1). */
    min_score: z.number().min(0, "must be from 0 to 1").max(1, "must be from 0 to 1").optional(),
  }),
  async run(ctx, input): Promise<{ data: RecalledMemory[] }> {
    const store = ctx.store;
    const hits = await store.recall({
      query: input.query,
      kinds: input.kinds,
      tags: input.tags,
      owner: input.owner,
      limit: input.limit,
      includeSuperseded: input.include_superseded,
      since: input.since,
      until: input.until,
      asOf: input.as_of,
    });
    const minScore = input.min_score ?? 0;
    // Best first, scoring at least min_score, as many as fit the response budget.
    const budget = new ResponseBudget();
    const data: RecalledMemory[] = [];
    for (const hit of hits) {
      if (hit.score < minScore) break;
      // as_of: each memory as it was then (ranked by its words now: see README, "History").
      const past = input.as_of === undefined ? undefined : store.asOf(memoryIdOf(hit.row.id), input.as_of);
      if (!budget.take(past === undefined ? answerBytes(hit.row) : versionBytes(past))) break;
      const record = past === undefined ? toRecord(hit.row) : pastRecord(past);
      data.push({ ...record, score: hit.score });
    }
    // The query itself is not audited: it may quote what the memories hold.
    ctx.audit.detail =
      input.as_of === undefined ? { results: data.length } : { results: data.length, as_of: input.as_of };
    return { data };
  },
});

/** A version as the record it was (the history entry without its `op` and `at`). */
function pastRecord(row: VersionRow): MemoryRecord {
  return toRecord({ ...row, updated_at: row.at });
}

export const memoryHistory = memoryOp({
  name: "memory.history",
  access: "read",
  writesStorage: false,
  tool: "memory_recall",
  input: z.strictObject({ id: idSchema, cursor: z.string().optional(), limit: limitSchema(LIST_PAGE) }),
  run(ctx, input): Page<MemoryVersion> {
    ctx.audit.target = input.id;
    const before =
      input.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(input.cursor, historyCursorSchema).v;
    const budget = new ResponseBudget();
    const rows = ctx.store.versions(input.id, before, input.limit, budget);
    return budgetedPage(rows, input.limit, budget, toVersion, (row) => ({ v: row.version }));
  },
});

export const memoryConsolidate = memoryOp({
  name: "memory.consolidate",
  access: "write",
  destructive: true,
  idempotent: false,
  writesStorage: false,
  tool: "memory_forget",
  input: z.strictObject({
    threshold: z
      .number()
      .min(CONSOLIDATE_THRESHOLD.min, `must be from ${CONSOLIDATE_THRESHOLD.min} to ${CONSOLIDATE_THRESHOLD.max}`)
      .max(CONSOLIDATE_THRESHOLD.max, `must be from ${CONSOLIDATE_THRESHOLD.min} to ${CONSOLIDATE_THRESHOLD.max}`)
      .default(CONSOLIDATE_THRESHOLD.default),
  }),
  async run(ctx, input): Promise<ConsolidateResult> {
    const result = await ctx.store.consolidate(input.threshold);
    ctx.audit.detail = { threshold: input.threshold, merged: result.merged, superseded: result.superseded.length };
    return result;
  },
});

export const MEMORY_OPERATIONS: readonly AnyOperation[] = [
  memoryRemember,
  memoryList,
  memoryGet,
  memoryForget,
  memorySupersede,
  memoryRecall,
  memoryConsolidate,
  memoryHistory,
];
