import { z } from "zod";
import { cursorArg, limitArg, primitiveArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("kv");
const key = z.string().min(1).describe("The key (up to 1024 bytes; may contain '/').");
const keys = z.array(z.string().min(1)).max(1000).describe("Several keys at once (up to 1000).");
const value = z.unknown().describe('Any JSON value; with encoding "bytes", a base64 string of raw bytes.');
const encoding = z.enum(["json", "bytes"]).optional().describe('"json" (default) or "bytes" (value is base64).');
const ttl = z
  .string()
  .optional()
  .describe('Expire the key after this long: "30s", "5m", "1h", "7d". Absent: no expiry.');

export const KV_TOOLS: ToolSpec[] = [
  {
    name: "kv_get",
    title: "Read keys",
    description:
      "Reads one key (`key`) or several (`keys`) from a key-value store. Returns each entry with value, encoding, version and expires_at; a missing key is a not_found error (with `keys`, missing ones come back as null).",
    type: "kv",
    shape: { primitive: p, key: key.optional(), keys: keys.optional() },
    pick: (a) => (a.keys !== undefined ? "mget" : "get"),
    actions: {
      get: { op: "kv.get", fields: ["key"] },
      mget: { op: "kv.mget", fields: ["keys"] },
    },
  },
  {
    name: "kv_list",
    title: "List keys",
    description: "Lists keys in byte order, optionally under a `prefix`; `values: true` includes the values. Paged.",
    type: "kv",
    shape: {
      primitive: p,
      prefix: z.string().optional().describe("Only keys starting with this."),
      values: z.boolean().optional().describe("Include each value (default false)."),
      limit: limitArg(1000, 100),
      cursor: cursorArg,
    },
    actions: { list: { op: "kv.list", fields: ["prefix", "values", "limit", "cursor"] } },
  },
  {
    name: "kv_set",
    title: "Write keys",
    description:
      'Sets a key ("set": `key`, `value`, optional `ttl`, `encoding`, `if_version` — 0 means the key must not exist yet), several keys ("mset": `items`, at most 100, all-or-nothing unless `atomic: false`), or adds to an integer ("incr": `key`, `by`).',
    type: "kv",
    shape: {
      primitive: p,
      action: z.enum(["set", "mset", "incr"]).optional().describe('Default "set".'),
      key: key.optional(),
      value: value.optional(),
      encoding,
      ttl,
      if_version: z.number().int().min(0).optional().describe("Write only if the key is at this version (0: absent)."),
      items: z
        .array(z.strictObject({ key, value, encoding, ttl, if_version: z.number().int().min(0).optional() }))
        .max(100)
        .optional()
        .describe('Entries for "mset".'),
      atomic: z.boolean().optional().describe('"mset": all or nothing (default true).'),
      by: z.number().int().optional().describe('"incr": amount to add (default 1).'),
    },
    actions: {
      set: { op: "kv.set", fields: ["key", "value", "encoding", "ttl", "if_version"] },
      mset: { op: "kv.mset", fields: ["items", "atomic"] },
      incr: { op: "kv.incr", fields: ["key", "by", "ttl"] },
    },
  },
  {
    name: "kv_delete",
    title: "Delete keys",
    description: "Deletes one key (`key`, optional `if_version`) or several (`keys`).",
    type: "kv",
    shape: { primitive: p, key: key.optional(), keys: keys.optional(), if_version: z.number().int().min(1).optional() },
    pick: (a) => (a.keys !== undefined ? "mdelete" : "delete"),
    actions: {
      delete: { op: "kv.delete", fields: ["key", "if_version"] },
      mdelete: { op: "kv.mdelete", fields: ["keys"] },
    },
  },
];
