import { type KvEntry, notFound } from "@prim/wire";
import { z } from "zod";
import { durationString } from "../../core/duration.js";
import { decodeCursor, KEY_PAGE, limitSchema, type Page, queryBoolean } from "../../core/pagination.js";
import { budgetedPage, ResponseBudget } from "../../core/response-budget.js";
import { type AnyOperation, dataOp } from "../operation.js";
import { checkKeySize, encodeValue, keySchema, MAX_KEYS_PER_CALL, MAX_MSET_ITEMS } from "./limits.js";
import { type KvStore, type SetRequest, withIndex } from "./store.js";

const kvOp = dataOp<KvStore>("kv");

const encodingSchema = z.enum(["json", "bytes"]).default("json");
const ifVersionSchema = z.coerce.number().int("must be an integer").min(0, "must be 0 or more");

const setItemSchema = z.strictObject({
  key: keySchema,
  value: z.unknown(),
  encoding: encodingSchema,
  ttl: durationString.optional(),
  if_version: ifVersionSchema.optional(),
});

type SetItem = z.infer<typeof setItemSchema>;

function toSetRequest(item: SetItem, field = ""): SetRequest {
  checkKeySize(item.key, `${field}key`);
  return {
    key: item.key,
    value: encodeValue(item.value, item.encoding, `${field}value`),
    ttlMs: item.ttl,
    ifVersion: item.if_version,
  };
}

const keysSchema = z.array(keySchema).max(MAX_KEYS_PER_CALL, `at most ${MAX_KEYS_PER_CALL} keys per call`);

const cursorSchema = z.object({ k: z.string() });

export const kvList = kvOp({
  name: "kv.list",
  access: "read",
  writesStorage: false,
  tool: "kv_list",
  input: z.strictObject({
    prefix: z.string().default(""),
    cursor: z.string().optional(),
    limit: limitSchema(KEY_PAGE),
    values: queryBoolean.default(false),
  }),
  run(ctx, input): Page<KvEntry> {
    const store = ctx.store;
    const after = input.cursor === undefined ? "" : decodeCursor(input.cursor, cursorSchema).k;
    // With values, a page ends early at the response budget (next_cursor continues it).
    const budget = new ResponseBudget();
    const rows = store.list({ prefix: input.prefix, after, limit: input.limit, values: input.values, budget });
    ctx.audit.target = input.prefix || null;
    return budgetedPage(
      rows,
      input.limit,
      budget,
      (e) => e,
      (e) => ({ k: e.key }),
    );
  },
});

export const kvGet = kvOp({
  name: "kv.get",
  access: "read",
  writesStorage: false,
  tool: "kv_get",
  input: z.strictObject({ key: keySchema }),
  run(ctx, input): KvEntry {
    ctx.audit.target = input.key;
    const entry = ctx.store.get(input.key);
    if (entry === null) throw notFound(`key '${input.key}'`);
    return entry;
  },
});

export const kvSet = kvOp({
  name: "kv.set",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: true,
  tool: "kv_set",
  input: setItemSchema,
  async run(ctx, input): Promise<KvEntry> {
    ctx.audit.target = input.key;
    const entry = await ctx.store.set(toSetRequest(input));
    ctx.audit.detail = { version: entry.version };
    return entry;
  },
});

export const kvDelete = kvOp({
  name: "kv.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "kv_delete",
  input: z.strictObject({ key: keySchema, if_version: ifVersionSchema.optional() }),
  async run(ctx, input): Promise<{ deleted: boolean }> {
    ctx.audit.target = input.key;
    const deleted = await ctx.store.delete(input.key, input.if_version);
    ctx.audit.detail = { deleted };
    return { deleted };
  },
});

export const kvMget = kvOp({
  name: "kv.mget",
  access: "read",
  writesStorage: false,
  tool: "kv_get",
  input: z.strictObject({ keys: keysSchema }),
  /**
   * Entries in request order. When they would pass the response budget, the answer holds the
   * entries of the first keys that fit and `truncated: true`; the caller asks again for
   * `keys.slice(data.length)`. (A 413 would refuse a valid request for the size of stored
   * data, and spread across many round trips what one answer can partly carry.)
   */
  run(ctx, input): { data: (KvEntry | null)[]; truncated: boolean } {
    const budget = new ResponseBudget();
    const data = ctx.store.mgetWithin(input.keys, budget);
    ctx.audit.detail = { keys: input.keys.length, ...(budget.cut ? { answered: data.length } : {}) };
    return { data, truncated: budget.cut };
  },
});

export const kvMset = kvOp({
  name: "kv.mset",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: true,
  tool: "kv_set",
  input: z.strictObject({
    items: z.array(setItemSchema).max(MAX_MSET_ITEMS, `at most ${MAX_MSET_ITEMS} items per call`),
    atomic: z.boolean().default(true),
  }),
  async run(ctx, input): Promise<{ data: KvEntry[] }> {
    const store = ctx.store;
    ctx.audit.detail = { items: input.items.length, atomic: input.atomic };
    if (input.atomic) {
      // Every item is checked before anything is written, so a bad item leaves no trace.
      const reqs = input.items.map((item, i) => toSetRequest(item, `items[${i}].`));
      return { data: await store.setAll(reqs) };
    }
    // Non-atomic: each item is checked and written in its own transaction; the first
    // failure stops the call and earlier items stay written.
    const data: KvEntry[] = [];
    for (const [i, item] of input.items.entries()) {
      try {
        data.push(await store.set(toSetRequest(item)));
      } catch (err) {
        throw withIndex(err, i, i === 0 ? "nothing was written" : `items[0..${i - 1}] were written`);
      }
    }
    return { data };
  },
});

export const kvMdelete = kvOp({
  name: "kv.mdelete",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "kv_delete",
  input: z.strictObject({ keys: keysSchema }),
  async run(ctx, input): Promise<{ deleted: number }> {
    const deleted = await ctx.store.mdelete(input.keys);
    ctx.audit.detail = { keys: input.keys.length, deleted };
    return { deleted };
  },
});

export const kvIncr = kvOp({
  name: "kv.incr",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "kv_set",
  input: z.strictObject({
    key: keySchema,
    by: z.number().int("must be an integer").default(1),
    ttl: durationString.optional(),
  }),
  async run(ctx, input): Promise<KvEntry> {
    ctx.audit.target = input.key;
    checkKeySize(input.key);
    const entry = await ctx.store.incr(input.key, input.by, input.ttl);
    ctx.audit.detail = { by: input.by, version: entry.version };
    return entry;
  },
});

export const KV_OPERATIONS: readonly AnyOperation[] = [
  kvList,
  kvGet,
  kvSet,
  kvDelete,
  kvMget,
  kvMset,
  kvMdelete,
  kvIncr,
];
