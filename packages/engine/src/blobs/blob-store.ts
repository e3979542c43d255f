import type { Readable } from "node:stream";

/** Where a write ended up: small bodies stay inline (in the primitive's SQLite file). */
export type Ingested =
  | { kind: "inline"; bytes: Buffer; sha256: string; size: number }
  | { kind: "blob"; hash: string; sha256: string; size: number };

export interface IngestOptions {
  /** Bytes past which the upload is cut off with 413 and nothing is kept. */
  maxBytes: number;
  /** Bodies of at most this many bytes are returned inline instead of stored as a blob. */
  inlineBelow: number;
}

/**
 * Content-addressed, immutable blobs (sha256 keys). Local: a directory; cloud: S3. Blobs are
 * shared by reference (copies, forks, snapshots) and collected when nothing names them.
 */
export interface BlobStore {
  /** Streams a body in without holding it whole in memory. */
  ingest(source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>, options: IngestOptions): Promise<Ingested>;
  /** A blob's size in bytes (it must exist). */
  size(hash: string): Promise<number>;
  /** A blob's bytes, or the inclusive byte range `[start, end]` of them. */
  read(hash: string, range?: { start: number; end: number }): Readable;
  /** Every stored blob's hash with its last-modified time (for collection). */
  list(): AsyncIterable<{ hash: string; mtimeMs: number }>;
  delete(hash: string): Promise<void>;
}
