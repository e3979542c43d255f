import { randomBytes } from "node:crypto";
import type { PresignResult } from "@prim/wire";
import { invalid, type ObjectInfo, type ObjectRead, ServiceError } from "@prim/wire";
import { z } from "zod";
import { durationString } from "../../core/duration.js";
import { KEY_PAGE, limitSchema, queryBoolean } from "../../core/pagination.js";
import { type AnyOperation, dataOp } from "../operation.js";
import {
  checkObjectKey,
  contentTypeSchema,
  DEFAULT_PRESIGN_MS,
  MAX_OBJECT_BYTES,
  MAX_PRESIGN_MS,
  MAX_SIGNED_USES,
  metadataSchema,
  objectKeySchema,
} from "./limits.js";
import { listObjects, type ObjectPage } from "./list.js";
import { readObject, writeObject } from "./objects.js";
import { SIGNED_OPERATIONS } from "./signed-ops.js";
import { type StorageStore, toInfo } from "./store.js";

export type { PresignResult };

const storageOp = dataOp<StorageStore>("storage");

const ifNoneMatchAny = z.literal("*", { error: "only '*' is supported" });
const maxSizeSchema = z.number().int().min(0).max(MAX_OBJECT_BYTES);

export const storageList = storageOp({
  name: "storage.list",
  access: "read",
  writesStorage: false,
  tool: "storage_list",
  input: z.strictObject({
    prefix: z.string().default(""),
    delimiter: z.string().min(1).optional(),
    cursor: z.string().optional(),
    limit: limitSchema(KEY_PAGE),
  }),
  run(ctx, input): ObjectPage {
    ctx.audit.target = input.prefix || null;
    return listObjects(ctx.store, input);
  },
});

export const storageRead = storageOp({
  name: "storage.read",
  access: "read",
  writesStorage: false,
  tool: "storage_read",
  input: z.strictObject({
    key: objectKeySchema,
    range: z.string().optional(),
    if_none_match: z.string().optional(),
    head: z.boolean().default(false),
    stat: queryBoolean.default(false),
  }),
  run(ctx, input): ObjectRead {
    ctx.audit.target = input.key;
    return readObject(ctx.store, ctx.services.blobs, input.key, {
      range: input.stat ? undefined : input.range,
      ifNoneMatch: input.stat ? undefined : input.if_none_match,
      headersOnly: input.head || input.stat,
    });
  },
});

export const storagePut = storageOp({
  name: "storage.put",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: true,
  tool: "storage_write",
  changes: (input) => [{ path: input.key }],
  input: z.strictObject({
    key: objectKeySchema,
    body: z.custom<AsyncIterable<Buffer>>((v) => typeof v === "object" && v !== null && Symbol.asyncIterator in v),
    content_type: contentTypeSchema.default("application/octet-stream"),
    metadata: metadataSchema.default({}),
    if_match: z.string().optional(),
    if_none_match: ifNoneMatchAny.optional(),
    content_length: z.number().int().min(0).optional(),
  }),
  async run(ctx, input): Promise<ObjectInfo> {
    ctx.audit.target = input.key;
    checkObjectKey(input.key);
    if (input.content_length !== undefined && input.content_length > MAX_OBJECT_BYTES) {
      throw tooLarge(input.content_length);
    }
    const store = ctx.store;
    const previousBlob = store.head(input.key)?.blob ?? null;
    const row = await writeObject(store, ctx.services.blobs, {
      key: input.key,
      body: input.body,
      contentType: input.content_type,
      metadata: input.metadata,
      maxBytes: MAX_OBJECT_BYTES,
      conditions: { ifMatch: input.if_match, ifNoneMatchAny: input.if_none_match === "*" },
    });
    if (previousBlob !== null && previousBlob !== row.blob) ctx.services.blobCollector.schedule();
    ctx.audit.detail = { size: row.size };
    return toInfo(row);
  },
});

function tooLarge(size: number): ServiceError {
  return new ServiceError("payload_too_large", `object is ${size} bytes; the limit is ${MAX_OBJECT_BYTES}`);
}

export const storageDelete = storageOp({
  name: "storage.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "storage_write",
  changes: (input) => [{ path: input.key }],
  input: z.strictObject({ key: objectKeySchema, if_match: z.string().optional() }),
  run(ctx, input): void {
    ctx.audit.target = input.key;
    if (ctx.store.delete(input.key, input.if_match)) ctx.services.blobCollector.schedule();
  },
});

export const storageCopy = storageOp({
  name: "storage.copy",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: true,
  tool: "storage_write",
  changes: (input) => [{ path: input.to }],
  input: z.strictObject({ from: objectKeySchema, to: objectKeySchema, if_none_match: ifNoneMatchAny.optional() }),
  run(ctx, input): ObjectInfo {
    ctx.audit.target = input.to;
    ctx.audit.detail = { from: input.from };
    checkObjectKey(input.to, "to");
    const store = ctx.store;
    const previousBlob = store.head(input.to)?.blob ?? null;
    const row = store.copy(input.from, input.to, { ifNoneMatchAny: input.if_none_match === "*" });
    if (previousBlob !== null && previousBlob !== row.blob) ctx.services.blobCollector.schedule();
    return toInfo(row);
  },
});

export const storagePresign = storageOp({
  name: "storage.presign",
  // A PUT URL lets its holder upload; a GET URL only reads.
  access: (input) => ((input as { method?: unknown } | null)?.method === "PUT" ? "write" : "read"),
  destructive: false,
  idempotent: false,
  writesStorage: false,
  tool: "storage_sign",
  input: z
    .strictObject({
      key: objectKeySchema,
      method: z.enum(["GET", "PUT"]).default("GET"),
      expires_in: durationString.optional(),
      content_type: contentTypeSchema.optional(),
      max_size: maxSizeSchema.optional(),
      max_bytes: maxSizeSchema.optional().describe("Another name for max_size; both given must be equal"),
      max_uses: z
        .number()
        .int()
        .min(1)
        .max(MAX_SIGNED_USES)
        .optional()
        .describe("Successful requests the URL serves; after them it answers 403"),
      if_none_match: ifNoneMatchAny.optional(),
    })
    .refine(
      (i) =>
        i.method === "PUT" ||
        (i.content_type === undefined &&
          i.max_size === undefined &&
          i.max_bytes === undefined &&
          i.if_none_match === undefined),
      "content_type, max_size (max_bytes) and if_none_match apply to PUT URLs only",
    )
    .refine((i) => i.max_size === undefined || i.max_bytes === undefined || i.max_size === i.max_bytes, {
      message: "is another name for max_size; give one of them, or both with the same value",
      path: ["max_bytes"],
    }),
  run(ctx, input): PresignResult {
    ctx.audit.target = input.key;
    ctx.audit.detail = { method: input.method, ...(input.max_uses === undefined ? {} : { max_uses: input.max_uses }) };
    checkObjectKey(input.key);
    const ttl = input.expires_in ?? DEFAULT_PRESIGN_MS;
    if (ttl > MAX_PRESIGN_MS) throw invalid("expires_in: signed URLs last at most 7d");
    const expiresAt = ctx.services.clock.now() + ttl;
    const store = ctx.store;
    const maxSize = input.max_size ?? input.max_bytes;
    const token = ctx.services.signer.sign({
      w: ctx.services.namespace,
      p: ctx.primitive.id,
      g: ctx.primitive.group_id,
      k: input.key,
      m: input.method,
      e: expiresAt,
      v: store.signEpoch(),
      ...(input.content_type === undefined ? {} : { ct: input.content_type }),
      ...(maxSize === undefined ? {} : { ms: maxSize }),
      ...(input.if_none_match === undefined ? {} : { inm: true as const }),
      ...(input.max_uses === undefined ? {} : { mu: input.max_uses, n: randomBytes(9).toString("base64url") }),
    });
    const headers: Record<string, string> = {};
    if (input.content_type !== undefined) headers["Content-Type"] = input.content_type;
    if (input.if_none_match !== undefined) headers["If-None-Match"] = "*";
    return {
      url: `/v1/signed/${token}`,
      method: input.method,
      headers,
      expires_at: expiresAt,
      ...(input.max_uses === undefined ? {} : { max_uses: input.max_uses }),
    };
  },
});

export const storageRevoke = storageOp({
  name: "storage.revoke",
  access: "write",
  destructive: true,
  idempotent: false,
  writesStorage: false,
  tool: "storage_sign",
  input: z.strictObject({}),
  run(ctx): { epoch: number } {
    const epoch = ctx.store.revokeSigned();
    ctx.audit.detail = { epoch };
    return { epoch };
  },
});

export const STORAGE_OPERATIONS: readonly AnyOperation[] = [
  storageList,
  storageRead,
  storagePut,
  storageDelete,
  storageCopy,
  storagePresign,
  storageRevoke,
  ...SIGNED_OPERATIONS,
];
