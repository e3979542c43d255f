import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { type Engine, LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { startServer, type TestServerOptions } from "@prim/testkit/rest";
import { afterEach, expect, vi } from "vitest";

// A streamed (blob-backed) response finishes on the server a moment after the client has read
// its last byte; a server closed in that moment keeps the keep-alive connection open until its
// timeout. This hook runs before helpers.ts closes the server (hooks run as a stack).
afterEach(() => sleep(50));

export const OBJECT_FIELDS = ["content_type", "created_at", "etag", "key", "metadata", "size", "updated_at"];

/** A server with group `app` and a storage primitive `files` in it. */
export async function withStorage(options: TestServerOptions = {}) {
  const server = await startServer(options);
  await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  const store = await server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: "files",
    type: "storage",
    group: "app",
  });
  const base = `/v1/primitives/${store.id}`;
  const auth = server.auth;
  /** PUT raw bytes to `/objects/{path}` (path already encoded). */
  const put = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetchBytes(`${server.url}${base}/objects/${path}`, {
      method: "PUT",
      body,
      headers: { "content-type": "application/octet-stream", ...auth, ...headers },
    });
  /** GET (or HEAD) `/objects/{path}` as bytes. */
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    fetchBytes(`${server.url}${base}/objects/${path}`, { method, headers: { ...auth, ...headers } });
  return { ...server, store, base, put, get, auth };
}

export interface BytesResponse {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The body parsed as JSON when it is JSON. */
  json: any;
}

/** fetch that keeps the body as bytes (and JSON when it parses). */
export async function fetchBytes(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<BytesResponse> {
  const res = await fetch(url, {
    method: init.method,
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: unknown;
  try {
    json = bytes.length === 0 ? undefined : JSON.parse(bytes.toString("utf8"));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * A request over node:http, so the caller controls the headers exactly (no Content-Type added)
 * and can stream the body from an iterable, waiting for each chunk to be flushed.
 */
export function rawRequest(
  url: string,
  options: {
    method: string;
    headers?: Record<string, string | number>;
    body?: Buffer | Iterable<Buffer> | AsyncIterable<Buffer>;
  },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method, headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    const body = options.body;
    if (body === undefined) {
      req.end();
    } else if (Buffer.isBuffer(body)) {
      req.end(body);
    } else {
      void (async () => {
        try {
          for await (const chunk of body) {
            await new Promise<void>((done, fail) => req.write(chunk, (err) => (err ? fail(err) : done())));
          }
          req.end();
        } catch {
          // The server answered early (for example 413) and closed; the response settles it.
        }
      })();
    }
  });
}

/** Every blob file under `<dataDir>/blobs/<2 hex>/`. */
export function blobFiles(dataDir: string): string[] {
  const root = join(dataDir, "blobs");
  const out: string[] = [];
  for (const shard of readdirSync(root)) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    for (const name of readdirSync(join(root, shard))) out.push(name);
  }
  return out.sort();
}

/** Files left in `<dataDir>/blobs/tmp`. */
export function tmpFiles(dataDir: string): string[] {
  const dir = join(dataDir, "blobs", "tmp");
  return existsSync(dir) ? readdirSync(dir) : [];
}

export const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** Deterministic bytes: `n` bytes of a pattern that differs at every offset modulo 251. */
export function pattern(n: number, seed = 0): Buffer {
  const buf = Buffer.alloc(n);
  for (let i = 0; i < n; i++) buf[i] = (i * 31 + seed * 7 + (i >> 8)) % 251;
  return buf;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true (or the time runs out); returns the last answer. */
export async function eventually(check: () => boolean, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

/**
 * Resolves once `n` storage writes (put, signed put) have ended, failed ones included: the
 * engine audits every operation as it finishes, so this is the event "the upload is over".
 */
export async function writesEnded(engine: Engine, n: number): Promise<void> {
  await vi.waitFor(
    async () => {
      await engine.services.audit.flush();
      const entries = await engine.services.catalog.listAudit({ group: "app", action: "storage.", limit: 200 });
      expect(entries.filter((e) => e.action === "storage.put" || e.action === "storage.signed").length).toBe(n);
    },
    { timeout: 10_000, interval: 10 },
  );
}

/** Encodes each segment of a key for a URL path, keeping `/` as the separator. */
export const keyPath = (key: string) => key.split("/").map(encodeURIComponent).join("/");
