import type { RecalledMemory } from "@prim/wire";
import { notFound } from "@prim/wire";
import { z } from "zod";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, queryBoolean } from "../../core/pagination.js";
import { budgetedPage, ResponseBudget } from "../../core/response-budget.js";
import { type AnyOperation, dataOp } from "../operation.js";
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
    tags: tagsSchema.default([]),
    owner: ownerSchema.optional(),
    metadata: metadataSchema.default({}),
  }),
  async run(ctx, input): Promise<MemoryRecord> {
    checkText(input.text);
    const metadata = encodeMetadata(input.metadata);
    const store = ctx.store;
    const { record, embedded } = await store.remember({
      kind: input.kind,
      text: input.text,
      tags: input.tags,
      owner: input.owner ?? null,
      metadata,
    });
    ctx.audit.target = record.id;
    ctx.audit.detail = store.hasEmbedder ? { kind: record.kind, embedded } : { kind: record.kind };
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
  }),
  async run(ctx, input): Promise<{ data: RecalledMemory[] }> {
    const hits = await ctx.store.recall({
      query: input.query,
      kinds: input.kinds,
      tags: input.tags,
      owner: input.owner,
      limit: input.limit,
      includeSuperseded: input.include_superseded,
    });
    // The query itself is not audited: it may quote what the memories hold.
    ctx.audit.detail = { results: hits.length };
    // Best first, as many as fit the response budget (fewer than `limit` only for huge memories).
    const budget = new ResponseBudget();
    const fitting: typeof hits = [];
    for (const hit of hits) {
      if (!budget.take(answerBytes(hit.row))) break;
      fitting.push(hit);
    }
    return { data: fitting.map((hit) => ({ ...toRecord(hit.row), score: hit.score })) };
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
];
