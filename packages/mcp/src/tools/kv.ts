import { toolInfo } from "@prim/wire";
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
    ...toolInfo("kv_get"),
    shape: { primitive: p, key: key.optional(), keys: keys.optional() },
    pick: (a) => (a.keys !== undefined ? "mget" : "get"),
    actions: {
      get: { op: "kv.get", fields: ["key"] },
      mget: { op: "kv.mget", fields: ["keys"] },
    },
  },
  {
    ...toolInfo("kv_list"),
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
    ...toolInfo("kv_set"),
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
    ...toolInfo("kv_delete"),
    shape: { primitive: p, key: key.optional(), keys: keys.optional(), if_version: z.number().int().min(1).optional() },
    pick: (a) => (a.keys !== undefined ? "mdelete" : "delete"),
    actions: {
      delete: { op: "kv.delete", fields: ["key", "if_version"] },
      mdelete: { op: "kv.mdelete", fields: ["keys"] },
    },
  },
];
