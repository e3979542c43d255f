import { type ObjectRead, toolInfo } from "@prim/wire";
import { z } from "zod";
import { contentBody, encodeBytes, readCapped } from "../context.js";
import { cursorArg, encodingArg, limitArg, primitiveArg } from "./common.js";
import { noResult, presignToolResult, storageReadResult } from "./output.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("storage");
const key = z.string().min(1).describe("The object's key (like a path: 'reports/2026.pdf').");

async function objectContent(read: ObjectRead) {
  if (read.body === null) return read.info;
  const bytes = await readCapped(
    read.body,
    read.info.size,
    `object '${read.info.key}'`,
    "Use storage_sign to get a download URL.",
  );
  return { ...read.info, content: encodeBytes(bytes) };
}

export const STORAGE_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("storage_list"),
    shape: {
      primitive: p,
      prefix: z.string().optional().describe("Only keys starting with this."),
      delimiter: z.string().optional().describe('Group keys by this separator (usually "/").'),
      limit: limitArg(1000, 100),
      cursor: cursorArg,
    },
    actions: { list: { op: "storage.list", fields: ["prefix", "delimiter", "limit", "cursor"] } },
  },
  {
    ...toolInfo("storage_read"),
    shape: { primitive: p, key, stat: z.boolean().optional().describe("Only the object's info, no content.") },
    actions: {
      read: {
        op: "storage.read",
        fields: ["key"],
        input: (a) => ({ stat: a.stat === true }),
        output: (read: ObjectRead, _ctx, a) => (a.stat === true ? read.info : objectContent(read)),
        result: storageReadResult,
      },
    },
  },
  {
    ...toolInfo("storage_write"),
    shape: {
      primitive: p,
      action: z.enum(["put", "copy", "delete"]).optional().describe('Default "put".'),
      key: key.optional(),
      content: z.string().optional().describe("The object's bytes (see `encoding`)."),
      encoding: encodingArg,
      content_type: z.string().optional().describe("MIME type (default application/octet-stream)."),
      metadata: z.record(z.string(), z.string()).optional().describe("String pairs stored with the object."),
      from: z.string().optional().describe('"copy": source key.'),
      to: z.string().optional().describe('"copy": destination key.'),
    },
    actions: {
      put: {
        op: "storage.put",
        fields: ["key", "content_type", "metadata"],
        input: contentBody,
      },
      copy: { op: "storage.copy", fields: ["from", "to"] },
      delete: { op: "storage.delete", fields: ["key"], result: noResult },
    },
  },
  {
    ...toolInfo("storage_sign"),
    shape: {
      primitive: p,
      action: z.enum(["presign", "revoke"]).optional().describe('Default "presign".'),
      key: key.optional(),
      method: z.enum(["GET", "PUT"]).optional().describe("GET to download (default), PUT to upload."),
      expires_in: z.string().optional().describe('How long the URL works: "15m", "1h", "7d".'),
      content_type: z.string().optional().describe("PUT: the Content-Type the upload must use."),
      max_size: z.number().int().optional().describe("PUT: the largest upload in bytes (413 past it)."),
      if_none_match: z.literal("*").optional().describe('PUT: "*" makes the URL create-only (412 if the key exists).'),
      max_uses: z
        .number()
        .int()
        .optional()
        .describe("How many successful requests the URL serves (1 to 1000000); then it answers 403."),
    },
    actions: {
      presign: {
        op: "storage.presign",
        fields: ["key", "method", "expires_in", "content_type", "max_size", "if_none_match", "max_uses"],
        // Over stdio without a running `prim dev` nothing serves signed URLs: say so.
        output: (r: { url: string }, ctx) =>
          ctx.baseUrl === ""
            ? { ...r, note: "this is a path: start `prim dev` on the same data directory to serve it" }
            : { ...r, url: `${ctx.baseUrl}${r.url}` },
        result: presignToolResult,
      },
      revoke: { op: "storage.revoke" },
    },
  },
];
