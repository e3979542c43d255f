import type { ObjectRead } from "@prim/wire";
import { z } from "zod";
import { contentBody, encodeBytes, readCapped } from "../context.js";
import { cursorArg, encodingArg, limitArg, primitiveArg } from "./common.js";
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
    name: "storage_list",
    title: "List objects",
    description:
      'Lists objects (key, size, etag, content_type, metadata, dates) in key order, optionally under a `prefix`; with `delimiter: "/"` it also returns common `prefixes` like folders. Paged.',
    type: "storage",
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
    name: "storage_read",
    title: "Read an object",
    description:
      "Reads an object: its info and `content` ({ text } when UTF-8, else { base64 }), up to 1 MiB; larger objects answer payload_too_large — use storage_sign for a download URL. `stat: true` returns only the info.",
    type: "storage",
    shape: { primitive: p, key, stat: z.boolean().optional().describe("Only the object's info, no content.") },
    actions: {
      read: {
        op: "storage.read",
        fields: ["key"],
        input: (a) => ({ stat: a.stat === true }),
        output: (read: ObjectRead, _ctx, a) => (a.stat === true ? read.info : objectContent(read)),
      },
    },
  },
  {
    name: "storage_write",
    title: "Write, copy or delete objects",
    description:
      '"put" (default): writes `content` (utf8 text, or base64 with `encoding: "base64"`) at `key`, with optional `content_type` and string `metadata`. "copy": copies `from` to `to`. "delete": removes `key`.',
    type: "storage",
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
      delete: { op: "storage.delete", fields: ["key"] },
    },
  },
  {
    name: "storage_sign",
    title: "Make a signed URL",
    description:
      '"presign" (default): a URL anyone can use without credentials to GET (download) or PUT (upload) one object until it expires (`expires_in`, default 1h, at most 7d). "revoke": invalidates every signed URL of the store.',
    type: "storage",
    shape: {
      primitive: p,
      action: z.enum(["presign", "revoke"]).optional().describe('Default "presign".'),
      key: key.optional(),
      method: z.enum(["GET", "PUT"]).optional().describe("GET to download (default), PUT to upload."),
      expires_in: z.string().optional().describe('How long the URL works: "15m", "1h", "7d".'),
      content_type: z.string().optional().describe("PUT: the Content-Type the upload must use."),
    },
    actions: {
      presign: {
        op: "storage.presign",
        fields: ["key", "method", "expires_in", "content_type"],
        // Over stdio without a running `prim dev` nothing serves signed URLs: say so.
        output: (r: { url: string }, ctx) =>
          ctx.baseUrl === ""
            ? { ...r, note: "this is a path: start `prim dev` on the same data directory to serve it" }
            : { ...r, url: `${ctx.baseUrl}${r.url}` },
      },
      revoke: { op: "storage.revoke" },
    },
  },
];
