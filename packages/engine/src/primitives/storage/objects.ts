import { notFound, type ObjectRead } from "@prim/wire";
import type { BlobStore } from "../../blobs/blob-store.js";
import { INLINE_OBJECT_BYTES } from "./limits.js";
import { parseRange } from "./range.js";
import {
  checkConditions,
  etagMatches,
  type ObjectRow,
  type StorageStore,
  toInfo,
  type WriteConditions,
} from "./store.js";

export interface ReadOptions {
  range?: string | undefined;
  ifNoneMatch?: string | undefined;
  /** Headers only (HEAD, `stat=1`): no body is opened. */
  headersOnly: boolean;
}

export function readObject(store: StorageStore, blobs: BlobStore, key: string, opts: ReadOptions): ObjectRead {
  const row = store.head(key);
  if (row === undefined) throw notFound(`object '${key}'`);
  const info = toInfo(row);
  if (opts.ifNoneMatch !== undefined && etagMatches(opts.ifNoneMatch, row.etag)) {
    return { info, status: 304, range: null, body: null };
  }
  const range = parseRange(opts.range, row.size);
  const status = range === null ? 200 : 206;
  if (opts.headersOnly) return { info, status, range, body: null };
  if (row.blob !== null) return { info, status, range, body: blobs.read(row.blob, range ?? undefined) };
  const bytes = store.inlineBody(key);
  return { info, status, range, body: range === null ? bytes : bytes.subarray(range.start, range.end + 1) };
}

export interface WriteInput {
  key: string;
  body: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>;
  contentType: string;
  metadata: Record<string, string>;
  maxBytes: number;
  conditions: WriteConditions;
}

/**
 * Streams a body into the blob store (small ones inline) and then commits the object row.
 * Conditions are checked before the upload (to fail fast) and again atomically with the
 * commit. A failed or interrupted upload leaves the previous object as it was.
 */
export async function writeObject(store: StorageStore, blobs: BlobStore, input: WriteInput): Promise<ObjectRow> {
  checkConditions(store.head(input.key), input.key, input.conditions);
  const ingested = await blobs.ingest(input.body, { maxBytes: input.maxBytes, inlineBelow: INLINE_OBJECT_BYTES });
  return store.put(
    {
      key: input.key,
      size: ingested.size,
      etag: `"${ingested.sha256}"`,
      contentType: input.contentType,
      metadata: input.metadata,
      body: ingested.kind === "inline" ? ingested.bytes : null,
      blob: ingested.kind === "blob" ? ingested.hash : null,
    },
    input.conditions,
  );
}
