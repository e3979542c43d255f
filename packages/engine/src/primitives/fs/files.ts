import { type FsRead, notFound } from "@prim/wire";
import type { BlobStore } from "../../blobs/blob-store.js";
import type { BlobCollector } from "../../blobs/collector.js";
import { contentTypeFor } from "./content-type.js";
import type { FsHandle } from "./handle.js";
import { INLINE_FILE_BYTES, MAX_FILE_BYTES, MAX_INDEXED_BYTES } from "./limits.js";
import { TextSample } from "./search.js";
import { type EntryRow, toEntry } from "./store.js";

export interface ReadOptions {
  list: boolean;
  recursive: boolean;
  stat: boolean;
  /** Headers only (HEAD): no body is opened. */
  head: boolean;
}

export function readPath(fs: FsHandle, blobs: BlobStore, path: string, opts: ReadOptions): FsRead {
  const row = fs.store.get(path);
  if (row === undefined) throw notFound(`path '${path}'`);
  if (opts.stat) return { kind: "entry", entry: toEntry(row) };
  if (row.type === "dir") {
    const { rows, truncated } = fs.store.list(path, opts.recursive);
    return { kind: "list", data: rows.map(toEntry), truncated };
  }
  // `ls file` lists the file itself.
  if (opts.list || opts.recursive) return { kind: "list", data: [toEntry(row)], truncated: false };
  const body = opts.head ? null : row.blob !== null ? blobs.read(row.blob) : fs.store.inlineContent(path);
  return { kind: "file", entry: toEntry(row), content_type: contentTypeFor(row.name), body };
}

export interface WriteInput {
  path: string;
  body: AsyncIterable<Buffer | Uint8Array>;
  /** Null keeps an existing file's mode (a new file gets 644). */
  mode: number | null;
  contentLength: number | undefined;
}

export interface Written {
  row: EntryRow;
  created: boolean;
}

/**
 * Streams a body into the blob store (small files inline), then commits the entry with its
 * parents and search text in one transaction. Conflicts are checked before the upload (to fail
 * fast) and again in the commit; a refused or interrupted upload leaves the old file as it was.
 */
export async function writeFile(
  fs: FsHandle,
  services: { blobs: BlobStore; blobCollector: BlobCollector },
  input: WriteInput,
): Promise<Written> {
  fs.store.checkWritable(input.path, "file");
  // Bodies announced as too big to index skip the sampling step.
  const sample = input.contentLength !== undefined && input.contentLength > MAX_INDEXED_BYTES ? null : new TextSample();
  const source = sample === null ? input.body : sample.tap(input.body);
  const ingested = await services.blobs.ingest(source, { maxBytes: MAX_FILE_BYTES, inlineBelow: INLINE_FILE_BYTES });
  let result: ReturnType<FsHandle["store"]["writeFile"]>;
  try {
    result = fs.store.writeFile({
      path: input.path,
      size: ingested.size,
      etag: `"${ingested.sha256}"`,
      mode: input.mode,
      content: ingested.kind === "inline" ? ingested.bytes : null,
      blob: ingested.kind === "blob" ? ingested.hash : null,
      text: sample?.text() ?? null,
    });
  } catch (err) {
    // A conflict that appeared during the upload: the new blob is nobody's.
    if (ingested.kind === "blob") services.blobCollector.schedule();
    throw err;
  }
  if (result.oldBlob !== null && result.oldBlob !== result.row.blob) services.blobCollector.schedule();
  return { row: result.row, created: result.created };
}
