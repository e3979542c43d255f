import { createHash } from "node:crypto";
import { createReadStream, existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { ServiceError } from "@prim/wire";
import type { EngineServices } from "../primitives/services.js";

/**
 * Uploads of group archives (`POST /v1/groups/{group}/import`): each is kept as
 * `<dataDir>/imports/<group>.<sha256>.part` while it arrives and after a dropped connection, so
 * a client resumes it. What one workspace may hold that way is capped (issue 35) and counted in
 * its storage gauge (`pendingUploadBytes`).
 */

/** How long an unfinished upload waits for the rest of its bytes. */
export const UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;
/** Uploads one workspace may write at once; past it 429 `rate_limited`. */
export const MAX_CONCURRENT_UPLOADS = 4;
/**
 * Bytes one workspace's unfinished uploads may hold together (16 GiB): also the largest archive
 * it can import (a larger one is 413). Above the Starter plan's whole storage, so any group that
 * fits a capped plan fits; the disk one workspace can take with abandoned uploads stays bounded.
 */
export const MAX_PENDING_UPLOAD_BYTES = 16 * 1024 ** 3;
/** Unfinished uploads one workspace keeps; a new one first discards the oldest idle ones. */
export const MAX_KEPT_UPLOADS = 8;
/** `Retry-After` of a refused upload: uploads in progress end, or are taken over, by then. */
export const UPLOAD_RETRY_AFTER_S = 30;

export const uploadPath = (services: EngineServices, group: string, sha256: string) =>
  join(services.files.workDir("imports"), `${group}.${sha256}.part`);

/**
 * Uploads being written now, by path. A new request for the same archive takes over: a client
 * that reconnects after a dropped connection must not wait for the server to notice the old one
 * is gone (a half-open connection can stay silent for minutes).
 */
const uploading = new Map<string, { body: Readable; done: Promise<void> }>();

interface Partial {
  path: string;
  size: number;
  mtimeMs: number;
  /** A request is writing it now (it cannot be discarded to make room). */
  writing: boolean;
}

/** The unfinished uploads kept in `dir` (expired ones left out: the next import sweeps them). */
function partials(dir: string): Partial[] {
  const since = Date.now() - UPLOAD_TTL_MS;
  const out: Partial[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".part"))) {
    const path = join(dir, name);
    const info = statSync(path, { throwIfNoEntry: false });
    if (info === undefined || info.mtimeMs < since) continue;
    out.push({ path, size: info.size, mtimeMs: info.mtimeMs, writing: uploading.has(path) });
  }
  return out.sort((a, b) => a.mtimeMs - b.mtimeMs);
}

/** Bytes the workspace's unfinished uploads hold (part of its storage gauge). */
export function pendingUploadBytes(services: EngineServices): number {
  // Read without creating the directory: a workspace that never imported has none.
  const dir = join(services.files.primitivesDir, "..", "imports");
  if (!existsSync(dir)) return 0;
  return partials(dir).reduce((sum, p) => sum + p.size, 0);
}

const retryLater = (why: string) =>
  new ServiceError("rate_limited", `${why}; retry after ${UPLOAD_RETRY_AFTER_S} s`, {
    headers: { "Retry-After": String(UPLOAD_RETRY_AFTER_S) },
  });

/**
 * Makes `path` the upload being written, ending the request that wrote it before (takeover).
 * Refused (429) when the workspace already writes MAX_CONCURRENT_UPLOADS other uploads; the
 * oldest idle unfinished uploads beyond MAX_KEPT_UPLOADS are discarded. Answers the release.
 */
export async function takeOver(path: string, body: Readable): Promise<() => void> {
  const previous = uploading.get(path);
  if (previous !== undefined) {
    // A request body is a stream; an in-process caller's generator cannot be stopped from here.
    if (typeof previous.body.destroy === "function") {
      previous.body.destroy(new ServiceError("conflict", "a newer request took this upload over"));
    }
    await previous.done;
  }
  // Counted and registered in one turn: two requests cannot both take the last slot.
  const dir = dirname(path);
  const writers = [...uploading.keys()].filter((p) => p !== path && dirname(p) === dir).length;
  if (writers >= MAX_CONCURRENT_UPLOADS) {
    throw retryLater(
      `this workspace already has ${writers} archive uploads in progress (at most ${MAX_CONCURRENT_UPLOADS})`,
    );
  }
  let finish = () => {};
  // A later takeover destroys this body, maybe before anything reads it: without a listener its
  // 'error' would be an uncaught exception. The reader still gets the error from the stream.
  if (typeof body.on === "function") body.on("error", () => undefined);
  uploading.set(path, { body, done: new Promise((resolve) => (finish = resolve)) });
  const idle = partials(dir).filter((p) => !p.writing && p.path !== path);
  for (const old of idle.slice(0, Math.max(0, idle.length - (MAX_KEPT_UPLOADS - 1)))) rmSync(old.path, { force: true });
  return () => {
    if (uploading.get(path)?.body === body) uploading.delete(path);
    finish();
  };
}

/**
 * Room for the upload at `path` to reach `size` bytes within MAX_PENDING_UPLOAD_BYTES: the
 * oldest idle unfinished uploads are discarded first; what uploads in progress hold is 429.
 * An upload larger than the cap by itself is 413 (its file is removed: it can never fit).
 */
async function makeRoom(path: string, size: number): Promise<void> {
  if (size > MAX_PENDING_UPLOAD_BYTES) {
    await rm(path, { force: true });
    throw new ServiceError(
      "payload_too_large",
      `an archive upload may be at most ${MAX_PENDING_UPLOAD_BYTES} bytes (16 GiB); nothing was imported`,
    );
  }
  const others = partials(dirname(path)).filter((p) => p.path !== path);
  let held = others.reduce((sum, p) => sum + p.size, 0);
  for (const old of others) {
    if (held + size <= MAX_PENDING_UPLOAD_BYTES) return;
    if (old.writing) continue;
    rmSync(old.path, { force: true });
    held -= old.size;
  }
  if (held + size > MAX_PENDING_UPLOAD_BYTES) {
    throw retryLater(
      `this workspace's archive uploads in progress hold ${held} bytes; together they may hold at most ${MAX_PENDING_UPLOAD_BYTES}`,
    );
  }
}

/** A request body's chunks (64 KiB off a socket) gathered into writes of about 1 MiB. */
async function* coalesce(body: AsyncIterable<Buffer>, size = 1024 * 1024): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      parts.push(chunk);
      length += chunk.length;
      if (length >= size) {
        yield parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length);
        parts = [];
        length = 0;
      }
    }
  } catch (err) {
    // The body broke off: what arrived is still kept (a resume starts after it).
    if (length > 0) yield Buffer.concat(parts, length);
    throw err;
  }
  if (length > 0) yield Buffer.concat(parts, length);
}

/**
 * The whole archive as it arrives, from byte 0: what an earlier request left at `path` (which
 * must be `offset` bytes), then `body`, appended to `path` as it passes (a body that breaks off
 * — the client went away — leaves what arrived, to resume from) and hashed; `done` learns the
 * sha256 and size once the body has ended. Each write first makes room for itself (`makeRoom`).
 */
export async function* upload(
  path: string,
  offset: number,
  body: AsyncIterable<Buffer>,
  done: (whole: { sha256: string; size: number }) => void,
): AsyncGenerator<Buffer> {
  const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  if (offset > 0 && size !== offset) {
    throw new ServiceError(
      "conflict",
      `this upload has ${size} bytes here, not ${offset}; resume at offset ${size} (GET the import status)`,
    );
  }
  const hash = createHash("sha256");
  if (offset > 0) {
    for await (const chunk of createReadStream(path, { end: offset - 1, highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer);
      yield chunk as Buffer;
    }
  }
  // "w" empties the file as it opens it; a resume cuts off anything written past `offset` since.
  const file = await open(path, offset > 0 ? "r+" : "w", 0o600);
  let position = offset;
  try {
    if (offset > 0) await file.truncate(offset);
    for await (const chunk of coalesce(body)) {
      await makeRoom(path, position + chunk.length);
      // The reader unpacks this chunk while it is written here (the file waits in libuv's pool).
      const writing = file.write(chunk, 0, chunk.length, position);
      writing.catch(() => undefined);
      position += chunk.length;
      hash.update(chunk);
      yield chunk;
      await writing;
    }
  } finally {
    await file.close();
  }
  done({ sha256: hash.digest("hex"), size: position });
}
