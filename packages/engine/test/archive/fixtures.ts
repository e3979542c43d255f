import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  type FetchResult,
  type FsRead,
  type GroupArchive,
  type ImportResult,
  type ImportStatus,
  type Job,
  LOCAL_PRINCIPAL,
  type MemoryRecord,
  type ObjectRead,
  type Page,
  type PrimitiveInfo,
  type PrimitiveType,
} from "@prim/wire";
import { afterAll, beforeAll } from "vitest";
import type { Engine } from "../../src/engine.js";
import { testEngine } from "../helpers.js";

// The archive's ustar entries and manifest: @prim/testkit (apps/api's suites read archives too).
export { manifestOf, tarEntries } from "@prim/testkit";

/**
 * Shared setup for the group archive suites (`round-trip`, `refusals`, `resume-replace`): two
 * local engines on temp dirs, a group seeded with every type, export and import calls, readers
 * for what a primitive holds, a ustar walker, and a loopback HTTP server for the vault's
 * injected credentials. No tests here.
 */

export type TestEngine = ReturnType<typeof testEngine>;

export const call = <T = unknown>(engine: Engine, op: string, target: string | null, input: unknown = {}) =>
  engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);

export const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

export const FS_BIG = Buffer.alloc(100 * 1024, "fs-big/"); // > 64 KiB: a blob, not inline
export const STORAGE_BIG = Buffer.from(Array.from({ length: 300 * 1024 }, (_, i) => (i * 31) % 251)); // > 256 KiB
export const TOKEN = "tok_live_0123456789abcdef";
export const API_KEY = "key-fedcba9876543210";

/** The loopback upstream's address, known once the suite's `beforeAll` has run. */
export type Upstream = { readonly origin: string };

/**
 * A loopback upstream for vault.fetch: answers digests of the credentials it received (the
 * response is redacted, so the test compares what the server derived from them). Call it at a
 * test file's top level: it listens before the file's tests and closes after them.
 */
export function useLoopbackUpstream(): Upstream {
  const server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        authorization: sha256(req.headers.authorization ?? ""),
        api_key: sha256(String(req.headers["x-api-key"] ?? "")),
      }),
    );
  });
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    get origin() {
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}

export const twoEngines = () =>
  [testEngine({ allowLoopbackFetch: true }), testEngine({ allowLoopbackFetch: true })] as const;

async function bytesOf(body: Readable | Buffer | null): Promise<Buffer> {
  if (body === null) throw new Error("no body");
  if (Buffer.isBuffer(body)) return body;
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** The two credentials' digests as the upstream saw them through `vault.fetch`. */
export async function injected(
  engine: Engine,
  vault: string,
  upstream: Upstream,
): Promise<{ authorization: string; api_key: string }> {
  const bearer = await call<FetchResult>(engine, "vault.fetch", vault, {
    url: `${upstream.origin}/`,
    auth: { bearer: "TOKEN" },
  });
  const header = await call<FetchResult>(engine, "vault.fetch", vault, {
    url: `${upstream.origin}/`,
    auth: { header: "X-Api-Key", secret: "API_KEY" },
  });
  return {
    authorization: (JSON.parse(bearer.body) as { authorization: string }).authorization,
    api_key: (JSON.parse(header.body) as { api_key: string }).api_key,
  };
}

export const create = (engine: Engine, group: string, name: string, type: PrimitiveType) =>
  call<PrimitiveInfo>(engine, "primitive.create", null, { name, type, group });

/** Group `app` on `engine` with one primitive of every type, each holding data of every kind. */
export async function seedEverything(engine: Engine) {
  await call(engine, "group.create", null, { name: "app" });
  const db = await create(engine, "app", "main", "db");
  await call(engine, "db.batch", db.id, {
    statements: [
      { sql: "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL)" },
      { sql: "CREATE INDEX users_name ON users (name)" },
      {
        sql: "INSERT INTO users (name, score) VALUES (?, ?), (?, ?), (?, ?)",
        params: ["ada", 1.5, "grace", 2, "linus", null],
      },
      { sql: "CREATE TABLE events (at INTEGER, payload BLOB)" },
      { sql: "INSERT INTO events VALUES (1, x'00ff10'), (2, NULL)" },
    ],
  });

  const fs = await create(engine, "app", "files", "fs");
  await call(engine, "fs.write", fs.id, { path: "/README.md", body: Readable.from([Buffer.from("# hello\n")]) });
  await call(engine, "fs.mkdir", fs.id, { path: "/docs/deep/empty" });
  await call(engine, "fs.write", fs.id, { path: "/docs/deep/big.bin", body: Readable.from([FS_BIG]), mode: "600" });

  const queue = await create(engine, "app", "jobs", "queue");
  await call(engine, "queue.subscribe", queue.id, { topic: "news", queue: "fanout" });
  const receiveOne = async () =>
    (await call<Page<Job>>(engine, "queue.receive", queue.id, { queue: "work", lease: "5m" })).data[0] as Job;
  await call(engine, "queue.send", queue.id, { queue: "work", body: { n: "done" } });
  const done = await receiveOne();
  await call(engine, "queue.ack", queue.id, { queue: "work", job: done.id, lease_token: done.lease_token });
  await call(engine, "queue.send", queue.id, { queue: "work", body: { n: "dead" }, max_attempts: 3 });
  const dead = await receiveOne();
  await call(engine, "queue.ack", queue.id, {
    queue: "work",
    job: dead.id,
    lease_token: dead.lease_token,
    action: "dead",
    error: "boom",
  });
  await call(engine, "queue.send", queue.id, { queue: "work", body: { n: "leased" }, priority: 5 });
  const leased = await receiveOne();
  await call(engine, "queue.send", queue.id, { queue: "work", body: { n: "ready" } });
  await call(engine, "queue.send", queue.id, { queue: "work", body: { n: "delayed" }, delay: "1h" });

  const memory = await create(engine, "app", "notes", "memory");
  const tuesday = await call<MemoryRecord>(engine, "memory.remember", memory.id, {
    kind: "fact",
    text: "Deploys happen on Tuesdays after the standup",
    tags: ["ops"],
  });
  await call(engine, "memory.remember", memory.id, {
    kind: "preference",
    text: "Ada prefers green tea over coffee",
    owner: "ada",
    metadata: { source: "chat" },
  });
  const thursday = await call<MemoryRecord>(engine, "memory.supersede", memory.id, {
    id: tuesday.id,
    text: "Deploys happen on Thursdays after the standup",
  });

  const vault = await create(engine, "app", "secrets", "vault");
  await call(engine, "vault.put", vault.id, { name: "TOKEN", value: TOKEN });
  await call(engine, "vault.put", vault.id, { name: "API_KEY", value: API_KEY });
  await call(engine, "vault.grant", vault.id, { name: "TOKEN", allow: { hosts: ["127.0.0.1"] } });
  await call(engine, "vault.grant", vault.id, { name: "API_KEY", allow: { hosts: ["127.0.0.1"], methods: ["GET"] } });

  const kv = await create(engine, "app", "cache", "kv");
  await call(engine, "kv.set", kv.id, { key: "user/1", value: { name: "Ada", tags: ["a", "b"], n: 1 } });
  await call(engine, "kv.set", kv.id, {
    key: "raw",
    value: Buffer.from([0, 1, 2, 255]).toString("base64"),
    encoding: "bytes",
  });
  await call(engine, "kv.set", kv.id, { key: "session", value: "short-lived", ttl: "10m" });

  const storage = await create(engine, "app", "objects", "storage");
  await call(engine, "storage.put", storage.id, {
    key: "small.txt",
    body: Readable.from([Buffer.from("inline object")]),
    content_type: "text/plain",
  });
  await call(engine, "storage.put", storage.id, {
    key: "media/big.bin",
    body: Readable.from([STORAGE_BIG]),
    content_type: "application/x-test",
    metadata: { origin: "engine-a", "x-note": "big one" },
  });

  return { db, fs, queue, memory, vault, kv, storage, jobs: { done, dead, leased }, memories: { tuesday, thursday } };
}

export async function exportFor(engine: Engine, group: string, recipient?: string) {
  const { archive } = await call<GroupArchive>(
    engine,
    "group.export",
    group,
    recipient === undefined ? {} : { recipient },
  );
  return { ...archive, bytes: readFileSync(archive.path) };
}

export const importInto = (
  engine: Engine,
  group: string,
  body: Buffer | AsyncIterable<Buffer>,
  sha: string,
  extra = {},
) =>
  call<ImportResult>(engine, "group.import", null, {
    group,
    body: Buffer.isBuffer(body) ? Readable.from([body]) : body,
    sha256: sha,
    ...extra,
  });

export const recipientOf = async (engine: Engine) =>
  (await call<ImportStatus>(engine, "group.import_status", null, { group: "app" })).recipient;

/** A copy of `bytes` with the bits of `mask` flipped at `at`. */
export function flipped(bytes: Buffer, at: number, mask: number): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeUInt8(copy.readUInt8(at) ^ mask, at);
  return copy;
}

export async function queueState(engine: Engine, id: string) {
  const jobs = await call<Page<Job>>(engine, "queue.messages", id, { queue: "work" });
  return jobs.data.map((j) => ({ body: j.body, status: j.status, attempts: j.attempts, available_at: j.available_at }));
}

export const listing = async (engine: Engine, op: string, id: string) =>
  (await call<Page<unknown>>(engine, op, id, {})).data;

export async function fileOf(engine: Engine, fs: string, path: string) {
  const read = await call<FsRead>(engine, "fs.read", fs, { path });
  if (read.kind !== "file") throw new Error(`${path} is not a file`);
  return { entry: read.entry, bytes: await bytesOf(read.body) };
}

export async function objectOf(engine: Engine, storage: string, key: string) {
  const read = await call<ObjectRead>(engine, "storage.read", storage, { key });
  return { info: read.info, bytes: await bytesOf(read.body) };
}

/** What is left in a data directory's working folders after an import (nothing, when it ended). */
export function leftovers(dataDir: string): string[] {
  const dirs = ["imports", "tmp", join("blobs", "tmp")];
  return dirs.flatMap((d) =>
    existsSync(join(dataDir, d)) ? readdirSync(join(dataDir, d)).map((name) => join(d, name)) : [],
  );
}
