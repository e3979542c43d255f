import { type ObjectInfo, type ObjectRead, type Principal, ServiceError } from "@prim/wire";
import { z } from "zod";
import { type SignedGrant, signedUseId } from "../../keys/signing.js";
import { type AnyOperation, type OpContext, untargetedOp } from "../operation.js";
import { contentTypeSchema, MAX_OBJECT_BYTES } from "./limits.js";
import { readObject, writeObject } from "./objects.js";
import { type StorageStore, toInfo } from "./store.js";

/** Whoever holds a signed URL: no group, no tools; the token is the whole credential. */
export const SIGNED_URL_PRINCIPAL: Principal = {
  kind: "scoped",
  // The local engine's workspace. A multi-workspace cell presents `{ ...SIGNED_URL_PRINCIPAL,
  // workspace }` with the workspace the token names (`UrlSigner.peekWorkspace`).
  workspace: "local",
  actor: "signed-url",
  groupId: null,
  tools: [],
};

// One answer for every way a signed URL can be wrong, so a caller learns nothing from it.
const denied = () => new ServiceError("forbidden", "this signed URL is not valid");

const signedInput = z.strictObject({
  token: z.string(),
  method: z.enum(["GET", "HEAD", "PUT"]),
  range: z.string().optional(),
  if_none_match: z.string().optional(),
  body: z.custom<AsyncIterable<Buffer>>().optional(),
  content_type: contentTypeSchema.optional(),
  content_length: z.number().int().min(0).optional(),
});
type SignedInput = z.infer<typeof signedInput>;

/**
 * A request to `/v1/signed/{token}`. The token names the store, key, method, expiry, signing
 * epoch and constraints; a bad signature, expiry, revocation, wrong method, vanished store or
 * a store moved to another group are all 403. A paused store is 423.
 *
 * A token with `mu` (presign's `max_uses`) is good for that many successful requests: a use is
 * reserved in the store's file before the request is served and given back if it fails (any
 * error: 404, 412, 413, 416, a storage cap...). Every answer that is not an error counts — a
 * 200, a HEAD, a 206 range and a 304 alike; a download counts once its headers are decided,
 * even if the client then drops the body. With every use taken (or reserved by requests in
 * flight) the URL answers the same 403 as any other invalid URL.
 */
export const storageSigned = untargetedOp({
  name: "storage.signed",
  access: (input) => ((input as { method?: unknown } | null)?.method === "PUT" ? "write" : "read"),
  destructive: true,
  idempotent: true,
  audited: true,
  metered: true,
  // An upload is a write; downloads are reads.
  writesStorage: (input) => (input as { method?: unknown } | null)?.method === "PUT",
  // An upload changed the grant's key (named on the audit note once the grant was checked).
  changes: (input, audit) => (input.method === "PUT" && audit.target !== null ? [{ path: audit.target }] : []),
  input: signedInput,
  async run(ctx, input): Promise<ObjectRead | ObjectInfo> {
    const { services } = ctx;
    const grant = services.signer.verify(input.token);
    if (grant === null || grant.e <= services.clock.now()) throw denied();
    // Signed by this cell for another workspace: not a URL of this engine's.
    if (grant.w !== undefined && grant.w !== services.namespace) throw denied();
    if (grant.m !== (input.method === "HEAD" ? "GET" : input.method)) throw denied();
    const primitive = await services.catalog.getPrimitive(grant.p);
    if (primitive === null || primitive.type !== "storage" || primitive.group_id !== grant.g) throw denied();
    // The audit entry concerns this store from here on.
    ctx.audit.subject = { id: primitive.id, type: "storage", name: primitive.name, group: primitive.group };
    ctx.audit.target = grant.k;
    ctx.audit.detail = { method: input.method };
    const store = services.files.handle(primitive.id, primitive.type).store as StorageStore;
    if (store.signEpoch() !== grant.v) throw denied();
    if (primitive.paused) throw new ServiceError("paused", `primitive '${primitive.name}' is paused`);
    if (grant.m === "PUT" && grant.ct !== undefined && input.content_type !== grant.ct) throw denied();
    if (grant.mu === undefined) return serve(services, store, grant, input);
    // A URL with max_uses: reserve a use first, give it back if the request fails.
    const useId = signedUseId(input.token);
    if (!store.takeSignedUse(useId, grant.mu, grant.e)) throw denied();
    try {
      return await serve(services, store, grant, input);
    } catch (err) {
      store.returnSignedUse(useId);
      throw err;
    }
  },
});

/** Answers a request whose token checked out: the download, or the upload within the grant. */
async function serve(
  services: OpContext["services"],
  store: StorageStore,
  grant: SignedGrant,
  input: SignedInput,
): Promise<ObjectRead | ObjectInfo> {
  if (grant.m === "GET") {
    return readObject(store, services.blobs, grant.k, {
      range: input.range,
      ifNoneMatch: input.if_none_match,
      headersOnly: input.method === "HEAD",
    });
  }
  const maxBytes = Math.min(grant.ms ?? MAX_OBJECT_BYTES, MAX_OBJECT_BYTES);
  if (input.content_length !== undefined && input.content_length > maxBytes) {
    throw new ServiceError("payload_too_large", `this signed URL accepts at most ${maxBytes} bytes`);
  }
  const previousBlob = store.head(grant.k)?.blob ?? null;
  // The body streams through the size check (spoolUpload): past maxBytes it stops with 413
  // and nothing is stored; the previous object stays.
  const row = await writeObject(store, services.blobs, {
    key: grant.k,
    body: input.body ?? [],
    contentType: input.content_type ?? "application/octet-stream",
    metadata: {},
    maxBytes,
    conditions: { ifNoneMatchAny: grant.inm === true },
  });
  if (previousBlob !== null && previousBlob !== row.blob) services.blobCollector.schedule();
  return toInfo(row);
}

export const SIGNED_OPERATIONS: readonly AnyOperation[] = [storageSigned];
