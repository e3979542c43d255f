import { createHash, randomBytes } from "node:crypto";
import { type FileHandle, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { ServiceError } from "@prim/wire";
import type { IngestOptions } from "./blob-store.js";

/** Upload bytes are gathered into writes of about this size (fewer file round trips). */
const WRITE_CHUNK = 1024 * 1024;

/** A body read in: small enough to stay inline, or spooled to a private temp file. */
export type Spooled =
  | { kind: "inline"; bytes: Buffer; sha256: string; size: number }
  | { kind: "spooled"; path: string; sha256: string; size: number };

function tooLarge(max: number): ServiceError {
  return new ServiceError("payload_too_large", `body is larger than the limit of ${max} bytes`);
}

/**
 * What every blob store's `ingest` does first (local and S3 alike): reads `source` while
 * hashing it (sha256), keeps it in memory while it is at most `inlineBelow` bytes, else spools
 * it to a new 0600 file in `tmpDir` in writes of about 1 MiB (memory stays flat whatever its
 * size), fsynced and closed before it answers. A body over `maxBytes` is 413
 * `payload_too_large`; on any failure the temp file is gone. The caller puts a spooled file
 * under its hash (a rename, an upload) and removes it if it does not rename it.
 */
export async function spoolUpload(
  source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>,
  options: IngestOptions,
  tmpDir: string,
  /** Starts the temp file's name (a shared temp directory: whose file it is). */
  prefix = "",
): Promise<Spooled> {
  const hasher = createHash("sha256");
  const head: Buffer[] = [];
  let size = 0;
  let file: FileHandle | null = null;
  let path = "";
  let pendingBytes = 0;
  const flush = async (f: FileHandle) => {
    if (head.length === 0) return;
    await f.write(head.length === 1 ? (head[0] as Buffer) : Buffer.concat(head));
    head.length = 0;
    pendingBytes = 0;
  };
  try {
    for await (const chunk of source) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      if (size > options.maxBytes) throw tooLarge(options.maxBytes);
      hasher.update(buf);
      head.push(buf);
      pendingBytes += buf.length;
      if (file === null && size <= options.inlineBelow) continue;
      if (file === null) {
        path = join(tmpDir, `${prefix}${Date.now()}-${randomBytes(8).toString("hex")}`);
        file = await open(path, "wx", 0o600);
      }
      if (pendingBytes >= WRITE_CHUNK) await flush(file);
    }
    const sha256 = hasher.digest("hex");
    if (file === null) return { kind: "inline", bytes: Buffer.concat(head), sha256, size };
    await flush(file);
    await file.sync();
    await file.close();
    file = null;
    return { kind: "spooled", path, sha256, size };
  } catch (err) {
    if (file !== null) await file.close().catch(() => undefined);
    if (path !== "") await rm(path, { force: true });
    throw err;
  }
}
