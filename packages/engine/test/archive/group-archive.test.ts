import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
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
  type Principal,
  type QueryResult,
  type SnapshotInfo,
} from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { END_OF_ARCHIVE, padding, tarHeader } from "../../src/archive/tar.js";
import type { Engine } from "../../src/engine.js";
import { testEngine } from "../helpers.js";

/**
 * Group archives (`group.export`, `group.import_status`, `group.import`): a group of every type
 * moved between two engines with different master keys, archives refused for the wrong
 * recipient or damaged anywhere (nothing written), resumed uploads, replace in place, and who
 * may call them. Everything runs for real: two local engines on temp dirs, a loopback HTTP
 * server for the vault's injected credentials.
 */

type TestEngine = ReturnType<typeof testEngine>;

const call = <T = unknown>(engine: Engine, op: string, target: string | null, input: unknown = {}) =>
  engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

const FS_BIG = Buffer.alloc(100 * 1024, "fs-big/"); // > 64 KiB: a blob, not inline
const STORAGE_BIG = Buffer.from(Array.from({ length: 300 * 1024 }, (_, i) => (i * 31) % 251)); // > 256 KiB
const TOKEN = "tok_live_0123456789abcdef";
const API_KEY = "key-fedcba9876543210";

// A loopback upstream for vault.fetch: answers digests of the credentials it received (the
// response is redacted, so the test compares what the server derived from them).
let upstream: { origin: string; close(): Promise<void> };
beforeAll(async () => {
  const server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        authorization: sha256(req.headers.authorization ?? ""),
        api_key: sha256(String(req.headers["x-api-key"] ?? "")),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
});
afterAll(() => upstream.close());

const twoEngines = () => [testEngine({ allowLoopbackFetch: true }), testEngine({ allowLoopbackFetch: true })] as const;

async function bytesOf(body: Readable | Buffer | null): Promise<Buffer> {
  if (body === null) throw new Error("no body");
  if (Buffer.isBuffer(body)) return body;
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** The two credentials' digests as the upstream saw them through `vault.fetch`. */
async function injected(engine: Engine, vault: string): Promise<{ authorization: string; api_key: string }> {
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

const create = (engine: Engine, group: string, name: string, type: PrimitiveType) =>
  call<PrimitiveInfo>(engine, "primitive.create", null, { name, type, group });

/** Group `app` on `engine` with one primitive of every type, each holding data of every kind. */
async function seedEverything(engine: Engine) {
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

async function exportFor(engine: Engine, group: string, recipient?: string) {
  const { archive } = await call<GroupArchive>(
    engine,
    "group.export",
    group,
    recipient === undefined ? {} : { recipient },
  );
  return { ...archive, bytes: readFileSync(archive.path) };
}

const importInto = (engine: Engine, group: string, body: Buffer | AsyncIterable<Buffer>, sha: string, extra = {}) =>
  call<ImportResult>(engine, "group.import", null, {
    group,
    body: Buffer.isBuffer(body) ? Readable.from([body]) : body,
    sha256: sha,
    ...extra,
  });

const recipientOf = async (engine: Engine) =>
  (await call<ImportStatus>(engine, "group.import_status", null, { group: "app" })).recipient;

/** The entries of a ustar file: name, where its bytes start, and their size. */
function tarEntries(archive: Buffer): { name: string; offset: number; size: number }[] {
  const out = [];
  for (let pos = 0; pos + 512 <= archive.length; ) {
    const header = archive.subarray(pos, pos + 512);
    if (header.every((b) => b === 0)) break;
    const text = (from: number, to: number) =>
      header.subarray(from, to).toString("latin1").replace(/\0.*$/s, "").trim();
    const size = Number.parseInt(text(124, 136), 8);
    out.push({ name: text(0, 100), offset: pos + 512, size });
    pos += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** A copy of `bytes` with the bits of `mask` flipped at `at`. */
function flipped(bytes: Buffer, at: number, mask: number): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeUInt8(copy.readUInt8(at) ^ mask, at);
  return copy;
}

/** The archive's manifest (`prim-archive.json`). */
function manifestOf(archive: Buffer) {
  const entry = tarEntries(archive).find((e) => e.name === "prim-archive.json");
  if (entry === undefined) throw new Error("no manifest");
  return JSON.parse(archive.subarray(entry.offset, entry.offset + entry.size).toString());
}

async function queueState(engine: Engine, id: string) {
  const jobs = await call<Page<Job>>(engine, "queue.messages", id, { queue: "work" });
  return jobs.data.map((j) => ({ body: j.body, status: j.status, attempts: j.attempts, available_at: j.available_at }));
}

const listing = async (engine: Engine, op: string, id: string) => (await call<Page<unknown>>(engine, op, id, {})).data;

async function fileOf(engine: Engine, fs: string, path: string) {
  const read = await call<FsRead>(engine, "fs.read", fs, { path });
  if (read.kind !== "file") throw new Error(`${path} is not a file`);
  return { entry: read.entry, bytes: await bytesOf(read.body) };
}

async function objectOf(engine: Engine, storage: string, key: string) {
  const read = await call<ObjectRead>(engine, "storage.read", storage, { key });
  return { info: read.info, bytes: await bytesOf(read.body) };
}

/** What is left in a data directory's working folders after an import (nothing, when it ended). */
function leftovers(dataDir: string): string[] {
  const dirs = ["imports", "tmp", join("blobs", "tmp")];
  return dirs.flatMap((d) =>
    existsSync(join(dataDir, d)) ? readdirSync(join(dataDir, d)).map((name) => join(d, name)) : [],
  );
}

describe("group archives: happy path", () => {
  it("moves a group holding every type to another engine: same content, new ids, forked_from the source", async () => {
    const [a, b] = twoEngines();
    const src = await seedEverything(a.engine);
    const recipient = await recipientOf(b.engine);
    expect(recipient).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(recipient).not.toBe(await recipientOf(a.engine));

    const archive = await exportFor(a.engine, "app", recipient);
    expect(archive).toMatchObject({
      id: expect.stringMatching(/^arc_[0-9a-z]{26}$/),
      size: archive.bytes.length,
      sha256: sha256(archive.bytes),
      filename: "app.prim.tar",
      expires_at: a.clock.now() + 60 * 60 * 1000,
    });
    // Each primitive's file, each blob and the manifest; vault values only sealed.
    const entries = tarEntries(archive.bytes);
    const manifest = manifestOf(archive.bytes);
    expect(manifest.group).toEqual({ id: expect.any(String), name: "app" });
    expect(manifest.primitives.map((p: { type: string }) => p.type)).toEqual([
      "db",
      "fs",
      "queue",
      "memory",
      "vault",
      "kv",
      "storage",
    ]);
    expect(manifest.blobs.map((blob: { sha256: string }) => blob.sha256).sort()).toEqual(
      [sha256(FS_BIG), sha256(STORAGE_BIG)].sort(),
    );
    expect(manifest.vault.recipient).toBe(recipient);
    expect(entries.map((e) => e.name).sort()).toEqual(
      [
        "prim-archive.json",
        ...manifest.primitives.map((p: { entry: string }) => p.entry),
        ...manifest.blobs.map((blob: { entry: string }) => blob.entry),
      ].sort(),
    );
    for (const secret of [TOKEN, API_KEY]) {
      expect(archive.bytes.includes(Buffer.from(secret))).toBe(false);
    }

    const result = await importInto(b.engine, "restored", archive.bytes, archive.sha256);
    expect(result).toMatchObject({ sha256: archive.sha256, bytes: archive.size, group: { name: "restored" } });
    const sources = [src.db, src.fs, src.queue, src.memory, src.vault, src.kv, src.storage];
    expect(result.imported).toHaveLength(sources.length);
    const copyOf = new Map<string, string>();
    for (const [i, source] of sources.entries()) {
      const imported = result.imported[i];
      expect(imported).toMatchObject({ name: source.name, type: source.type, source_id: source.id, replaced: null });
      expect(imported?.id).not.toBe(source.id);
      const info = await call<PrimitiveInfo>(b.engine, "primitive.get", imported?.id ?? "");
      expect(info).toMatchObject({
        name: source.name,
        type: source.type,
        group: "restored",
        paused: false,
        forked_from: { id: source.id, name: source.name, type: source.type, group: "app", snapshot: null },
      });
      copyOf.set(source.id, info.id);
    }
    expect(result.group.primitives.map((p) => p.id).sort()).toEqual([...copyOf.values()].sort());
    const copy = (p: { id: string }) => copyOf.get(p.id) as string;

    // db: schema, indexes and rows, blobs and nulls included.
    for (const sql of [
      "SELECT * FROM users ORDER BY id",
      "SELECT * FROM events ORDER BY at",
      "SELECT name FROM sqlite_master ORDER BY name",
    ]) {
      const there = await call<QueryResult>(b.engine, "db.query", copy(src.db), { sql });
      expect(there.rows).toEqual((await call<QueryResult>(a.engine, "db.query", src.db.id, { sql })).rows);
    }
    expect(
      (await call<QueryResult>(b.engine, "db.query", copy(src.db), { sql: "SELECT count(*) AS n FROM users" })).rows,
    ).toEqual([{ n: 3 }]);

    // fs: the tree (modes, sizes, etags, empty directories) and both files' bytes.
    const tree = (engine: Engine, id: string) => call<FsRead>(engine, "fs.read", id, { path: "/", recursive: true });
    const fsTree = await tree(b.engine, copy(src.fs));
    expect(fsTree).toEqual(await tree(a.engine, src.fs.id));
    expect(fsTree.kind === "list" && fsTree.data.map((e) => e.path)).toEqual(
      expect.arrayContaining(["/README.md", "/docs/deep/empty", "/docs/deep/big.bin"]),
    );
    expect((await fileOf(b.engine, copy(src.fs), "/README.md")).bytes.toString()).toBe("# hello\n");
    const big = await fileOf(b.engine, copy(src.fs), "/docs/deep/big.bin");
    expect(big.bytes.equals(FS_BIG)).toBe(true);
    expect(big.entry.mode).toBe("600");

    // queue: the leased job is ready again (attempts kept), the rest keep their status; the
    // topic's subscription still delivers.
    const before = await queueState(a.engine, src.queue.id);
    const after = await queueState(b.engine, copy(src.queue));
    expect(before.map((j) => [j.body, j.status, j.attempts])).toEqual([
      [{ n: "done" }, "done", 1],
      [{ n: "dead" }, "dead", 1],
      [{ n: "leased" }, "leased", 1],
      [{ n: "ready" }, "ready", 0],
      [{ n: "delayed" }, "ready", 0],
    ]);
    expect(after).toEqual(
      before.map((j) => (j.status === "leased" ? { ...j, status: "ready", available_at: expect.any(Number) } : j)),
    );
    const job = await call<Job>(b.engine, "queue.get", copy(src.queue), { queue: "work", job: src.jobs.dead.id });
    expect(job).toMatchObject({ status: "dead", last_error: "boom", max_attempts: 3 });
    const received = await call<Page<Job>>(b.engine, "queue.receive", copy(src.queue), { queue: "work", max: 10 });
    expect(received.data.map((j) => [j.body, j.attempts])).toEqual([
      [{ n: "leased" }, 2],
      [{ n: "ready" }, 1],
    ]);
    expect(await call(b.engine, "queue.publish", copy(src.queue), { topic: "news", body: "hi" })).toEqual({
      delivered: 1,
    });
    // The source kept its lease.
    expect((await queueState(a.engine, src.queue.id))[2]?.status).toBe("leased");

    // memory: every record as listed (the superseded one too), and recall on the copy.
    const memories = await listing(b.engine, "memory.list", copy(src.memory));
    expect(memories).toEqual(await listing(a.engine, "memory.list", src.memory.id));
    expect(memories).toContainEqual(
      expect.objectContaining({ id: src.memories.tuesday.id, superseded_by: src.memories.thursday.id }),
    );
    const recall = async (input: object) =>
      (
        await call<Page<MemoryRecord>>(b.engine, "memory.recall", copy(src.memory), {
          query: "when do deploys happen",
          ...input,
        })
      ).data.map((m) => m.id);
    expect(await recall({})).toContain(src.memories.thursday.id);
    expect(await recall({})).not.toContain(src.memories.tuesday.id);
    expect(await recall({ include_superseded: true })).toEqual(
      expect.arrayContaining([src.memories.thursday.id, src.memories.tuesday.id]),
    );

    // vault: names, versions and grants listed alike; a fetch on B injects the same values.
    expect(await listing(b.engine, "vault.list", copy(src.vault))).toEqual(
      await listing(a.engine, "vault.list", src.vault.id),
    );
    expect(await listing(b.engine, "vault.grants", copy(src.vault))).toEqual(
      await listing(a.engine, "vault.grants", src.vault.id),
    );
    const expected = { authorization: sha256(`Bearer ${TOKEN}`), api_key: sha256(API_KEY) };
    expect(await injected(a.engine, src.vault.id)).toEqual(expected);
    expect(await injected(b.engine, copy(src.vault))).toEqual(expected);

    // kv: json and bytes values, versions, and a ttl that still runs out.
    const kvList = (engine: Engine, id: string) => call<Page<unknown>>(engine, "kv.list", id, { values: true });
    expect(await kvList(b.engine, copy(src.kv))).toEqual(await kvList(a.engine, src.kv.id));
    expect(await call(b.engine, "kv.get", copy(src.kv), { key: "raw" })).toMatchObject({
      encoding: "bytes",
      value: Buffer.from([0, 1, 2, 255]).toString("base64"),
    });
    expect(await call(b.engine, "kv.get", copy(src.kv), { key: "session" })).toMatchObject({
      expires_at: a.clock.now() + 10 * 60 * 1000,
    });
    b.clock.advance(10 * 60 * 1000 + 1);
    await expect(call(b.engine, "kv.get", copy(src.kv), { key: "session" })).rejects.toMatchObject({
      code: "not_found",
    });
    expect(await call(b.engine, "kv.get", copy(src.kv), { key: "user/1" })).toMatchObject({
      value: { name: "Ada", tags: ["a", "b"], n: 1 },
    });

    // storage: the inline and the blob object, with content type and metadata.
    const objects = (engine: Engine, id: string) => call<Page<unknown>>(engine, "storage.list", id, {});
    expect(await objects(b.engine, copy(src.storage))).toEqual(await objects(a.engine, src.storage.id));
    const small = await objectOf(b.engine, copy(src.storage), "small.txt");
    expect(small.bytes.toString()).toBe("inline object");
    expect(small.info.content_type).toBe("text/plain");
    const obj = await objectOf(b.engine, copy(src.storage), "media/big.bin");
    expect(obj.bytes.equals(STORAGE_BIG)).toBe(true);
    expect(obj.info).toMatchObject({
      size: STORAGE_BIG.length,
      content_type: "application/x-test",
      metadata: { origin: "engine-a", "x-note": "big one" },
    });

    // Nothing of the upload is left behind.
    expect(
      (await call<ImportStatus>(b.engine, "group.import_status", null, { group: "restored", sha256: archive.sha256 }))
        .upload,
    ).toEqual({
      sha256: archive.sha256,
      received: 0,
    });
    expect(leftovers(b.dataDir)).toEqual([]);
  });

  it("seals for the exporting engine by default: it imports its own archive, vault values intact", async () => {
    const a = testEngine({ allowLoopbackFetch: true });
    const src = await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app");
    const result = await importInto(a.engine, "app-copy", archive.bytes, archive.sha256);
    const vault = result.imported.find((p) => p.type === "vault")?.id ?? "";
    expect(vault).not.toBe(src.vault.id);
    expect(await injected(a.engine, vault)).toEqual({
      authorization: sha256(`Bearer ${TOKEN}`),
      api_key: sha256(API_KEY),
    });
  });

  it("answers the same archive again by id while it is kept", async () => {
    const { engine } = testEngine();
    await call(engine, "group.create", null, { name: "app" });
    const kv = await create(engine, "app", "cache", "kv");
    await call(engine, "kv.set", kv.id, { key: "k", value: 1 });
    const first = await call<GroupArchive>(engine, "group.export", "app", {});
    await call(engine, "kv.set", kv.id, { key: "k", value: 2 });
    const again = await call<GroupArchive>(engine, "group.export", "app", { archive: first.archive.id });
    expect(again).toEqual(first);
    expect(sha256(readFileSync(again.archive.path))).toBe(first.archive.sha256);
    const fresh = await call<GroupArchive>(engine, "group.export", "app", {});
    expect(fresh.archive.id).not.toBe(first.archive.id);
  });

  it("exports a consistent copy while writers continue", async () => {
    const [a, b] = twoEngines();
    await call(a.engine, "group.create", null, { name: "app" });
    const kv = await create(a.engine, "app", "cache", "kv");
    const db = await create(a.engine, "app", "main", "db");
    await call(a.engine, "db.exec", db.id, { sql: "CREATE TABLE t (n INTEGER PRIMARY KEY, sq INTEGER NOT NULL)" });
    const writes: Promise<unknown>[] = [];
    const exporting = call<GroupArchive>(a.engine, "group.export", "app", { recipient: await recipientOf(b.engine) });
    for (let n = 1; n <= 40; n++) {
      writes.push(call(a.engine, "kv.set", kv.id, { key: `k${n}`, value: n * n }));
      writes.push(call(a.engine, "db.exec", db.id, { sql: "INSERT INTO t VALUES (?, ?)", params: [n, n * n] }));
    }
    const [{ archive }] = await Promise.all([exporting, ...writes]);
    const result = await importInto(b.engine, "app", readFileSync(archive.path), archive.sha256);
    const kvCopy = result.imported.find((p) => p.type === "kv")?.id ?? "";
    const dbCopy = result.imported.find((p) => p.type === "db")?.id ?? "";
    // Whatever each copy caught, it is whole: every key it holds has its value.
    const keys = await call<Page<{ key: string; value: number }>>(b.engine, "kv.list", kvCopy, {
      values: true,
      limit: 100,
    });
    for (const entry of keys.data) expect(entry.value).toBe(Number(entry.key.slice(1)) ** 2);
    const rows = await call<QueryResult>(b.engine, "db.query", dbCopy, { sql: "SELECT n, sq FROM t ORDER BY n" });
    for (const row of rows.rows as { n: number; sq: number }[]) {
      expect(row.n).toBeGreaterThanOrEqual(1);
      expect(row.n).toBeLessThanOrEqual(40);
      expect(row.sq).toBe(row.n ** 2);
    }
  });
});

describe("group archives: refused archives write nothing", () => {
  /** B with data of its own (group `keep`), and an archive of A's `app` sealed for B. */
  async function setup() {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    await call(b.engine, "group.create", null, { name: "keep" });
    const kept = await create(b.engine, "keep", "cache", "kv");
    await call(b.engine, "kv.set", kept.id, { key: "mine", value: { v: 1 } });
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    const untouched = async () => {
      await expect(call(b.engine, "group.get", "app")).rejects.toMatchObject({ code: "not_found" });
      const all = await call<Page<PrimitiveInfo>>(b.engine, "primitive.list", null, {});
      expect(all.data.map((p) => p.id)).toEqual([kept.id]);
      expect(await call(b.engine, "kv.get", kept.id, { key: "mine" })).toMatchObject({ value: { v: 1 }, version: 1 });
      expect(leftovers(b.dataDir)).toEqual([]);
    };
    return { a, b, archive, untouched };
  }

  const noUpload = async (b: TestEngine, sha: string) =>
    expect(
      (await call<ImportStatus>(b.engine, "group.import_status", null, { group: "app", sha256: sha })).upload,
    ).toEqual({
      sha256: sha,
      received: 0,
    });

  it("refuses an archive sealed for another engine's key (400), B unchanged", async () => {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app"); // sealed for A itself
    await expect(importInto(b.engine, "app", archive.bytes, archive.sha256)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining(`export again with recipient=${await recipientOf(b.engine)}`),
    });
    await expect(call(b.engine, "group.get", "app")).rejects.toMatchObject({ code: "not_found" });
    expect((await call<Page<PrimitiveInfo>>(b.engine, "primitive.list", null, {})).data).toEqual([]);
    await noUpload(b, archive.sha256);
    expect(leftovers(b.dataDir)).toEqual([]);
  });

  it("refuses a flipped byte inside a blob entry (its sha256 checked, not only the file's)", async () => {
    const { b, archive, untouched } = await setup();
    const blob = tarEntries(archive.bytes).find((e) => e.name === `blobs/${sha256(STORAGE_BIG)}`);
    if (blob === undefined) throw new Error("no blob entry");
    const damaged = flipped(archive.bytes, blob.offset + Math.floor(blob.size / 2), 0x01);
    await expect(importInto(b.engine, "app", damaged, sha256(damaged))).rejects.toMatchObject({
      code: "invalid_request",
      message: `archive is corrupt: entry '${blob.name}' does not match its sha256; nothing was imported`,
    });
    await noUpload(b, sha256(damaged));
    await untouched();
  });

  it("refuses a flipped byte inside a primitive's file and inside a header", async () => {
    const { b, archive, untouched } = await setup();
    const entries = tarEntries(archive.bytes);
    const file = entries.find((e) => e.name.endsWith("-kv.sqlite"));
    if (file === undefined) throw new Error("no kv entry");
    const inFile = flipped(archive.bytes, file.offset + Math.floor(file.size / 2), 0x80);
    await expect(importInto(b.engine, "app", inFile, sha256(inFile))).rejects.toMatchObject({
      code: "invalid_request",
      message: `archive is corrupt: entry '${file.name}' does not match its sha256; nothing was imported`,
    });
    const inHeader = flipped(archive.bytes, file.offset - 512 + 3, 0x01); // in the kv entry's name
    await expect(importInto(b.engine, "app", inHeader, sha256(inHeader))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*checksum.*; nothing was imported$/),
    });
    await untouched();
  });

  type Layout = { size: number; blobAt: number; fileAt: number };
  it.each([
    ["inside the big blob", ({ blobAt }: Layout) => blobAt + 1000],
    ["inside a primitive's file", ({ fileAt }: Layout) => fileAt + 700],
    ["before the end marker", ({ size }: Layout) => size - 1024],
    ["mid-header", ({ blobAt }: Layout) => blobAt - 300],
  ])("refuses an archive truncated %s (400), nothing left behind", async (_where, cutAt) => {
    const { b, archive, untouched } = await setup();
    const entries = tarEntries(archive.bytes);
    const blob = entries.find((e) => e.name === `blobs/${sha256(STORAGE_BIG)}`);
    const file = entries.find((e) => e.name.endsWith("-db.sqlite"));
    if (blob === undefined || file === undefined) throw new Error("entries missing");
    const cut = archive.bytes.subarray(0, cutAt({ size: archive.size, blobAt: blob.offset, fileAt: file.offset }));
    await expect(importInto(b.engine, "app", cut, sha256(cut))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*truncated.*; nothing was imported$/),
    });
    await noUpload(b, sha256(cut));
    await untouched();
  });

  it("refuses an entry its manifest does not list, and a manifest naming one primitive twice (400)", async () => {
    const { b, archive, untouched } = await setup();
    const entries = tarEntries(archive.bytes);
    const bytesOf = (e: { offset: number; size: number }) => archive.bytes.subarray(e.offset, e.offset + e.size);
    const manifest = manifestOf(archive.bytes);
    const entry = (name: string, body: Buffer) => [tarHeader(name, body.length, 0), body, padding(body.length)];
    /** The archive rebuilt from its entries, with `extra` before the manifest and the manifest replaced. */
    const rebuilt = (extra: Buffer[], forged: object) => {
      const parts = entries.filter((e) => e.name !== "prim-archive.json").flatMap((e) => entry(e.name, bytesOf(e)));
      return Buffer.concat([
        ...parts,
        ...extra,
        ...entry("prim-archive.json", Buffer.from(JSON.stringify(forged))),
        END_OF_ARCHIVE,
      ]);
    };
    // The rebuilt archive as it is imports (so what follows is refused for its one change).
    const smuggled = Buffer.from("not listed anywhere");
    const withExtra = rebuilt(entry(`blobs/${sha256(smuggled)}`, smuggled), manifest);
    await expect(importInto(b.engine, "app", withExtra, sha256(withExtra))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*; nothing was imported$/),
    });
    const kv = manifest.primitives.find((p: { type: string }) => p.type === "kv");
    const twice = rebuilt([], { ...manifest, primitives: [...manifest.primitives, { ...kv }] });
    await expect(importInto(b.engine, "app", twice, sha256(twice))).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/^archive is corrupt: .*twice.*; nothing was imported$/),
    });
    await untouched();
    const intact = rebuilt([], manifest);
    expect((await importInto(b.engine, "app", intact, sha256(intact))).imported).toHaveLength(7);
  });

  it("refuses a body whose sha256 is not the one named (400) and keeps none of it", async () => {
    const { b, archive, untouched } = await setup();
    const wrong = sha256("something else");
    await expect(importInto(b.engine, "app", archive.bytes, wrong)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining(`the archive's sha256 is ${archive.sha256}, not ${wrong}`),
    });
    await noUpload(b, wrong);
    await noUpload(b, archive.sha256);
    await untouched();
    // The intact archive still imports afterwards.
    const result = await importInto(b.engine, "app", archive.bytes, archive.sha256);
    expect(result.imported).toHaveLength(7);
  });
});

describe("group archives: resumed uploads", () => {
  /** A body that delivers `bytes` in two chunks and then breaks off like a dropped connection. */
  async function* droppedAfter(bytes: Buffer): AsyncGenerator<Buffer> {
    const half = Math.floor(bytes.length / 2);
    yield bytes.subarray(0, half);
    yield bytes.subarray(half);
    throw new Error("socket hang up");
  }

  it("keeps what arrived before the connection dropped; the rest from that offset completes the import", async () => {
    const [a, b] = twoEngines();
    const src = await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    const status = async () =>
      (await call<ImportStatus>(b.engine, "group.import_status", null, { group: "app", sha256: archive.sha256 }))
        .upload;
    const n = Math.floor(archive.size * 0.6) + 7; // not on a block boundary
    await expect(
      importInto(b.engine, "app", droppedAfter(archive.bytes.subarray(0, n)), archive.sha256),
    ).rejects.toThrow("socket hang up");
    expect(await status()).toEqual({ sha256: archive.sha256, received: n });
    await expect(call(b.engine, "group.get", "app")).rejects.toMatchObject({ code: "not_found" });

    // Any other offset is refused, and what arrived stays.
    for (const offset of [n - 1, n + 1]) {
      await expect(
        importInto(b.engine, "app", archive.bytes.subarray(offset), archive.sha256, { offset }),
      ).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining(`resume at offset ${n}`) });
    }
    expect(await status()).toEqual({ sha256: archive.sha256, received: n });
    // Another break-off after more bytes moves the mark on.
    const m = n + 1000;
    await expect(
      importInto(b.engine, "app", droppedAfter(archive.bytes.subarray(n, m)), archive.sha256, { offset: n }),
    ).rejects.toThrow("socket hang up");
    expect(await status()).toEqual({ sha256: archive.sha256, received: m });

    const result = await importInto(b.engine, "app", archive.bytes.subarray(m), archive.sha256, { offset: m });
    expect(result).toMatchObject({ sha256: archive.sha256, bytes: archive.size });
    expect(result.imported.map((p) => p.source_id)).toEqual(
      [src.db, src.fs, src.queue, src.memory, src.vault, src.kv, src.storage].map((p) => p.id),
    );
    const storage = result.imported.find((p) => p.type === "storage")?.id ?? "";
    expect((await objectOf(b.engine, storage, "media/big.bin")).bytes.equals(STORAGE_BIG)).toBe(true);
    expect(await status()).toEqual({ sha256: archive.sha256, received: 0 });
    expect(leftovers(b.dataDir)).toEqual([]);
  });

  it("lets a newer upload of the same archive take over one still being written (the older ends 409)", async () => {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    // A half-open connection: some bytes came, then nothing, and nothing says it is gone.
    const stalled = new PassThrough();
    stalled.write(archive.bytes.subarray(0, 4096));
    const first = importInto(b.engine, "app", stalled, archive.sha256);
    first.catch(() => undefined);
    // Until the first request is reading its body (it took the 4 KiB written so far).
    while (stalled.readableLength > 0) await new Promise((resolve) => setImmediate(resolve));
    const second = await importInto(b.engine, "app", archive.bytes, archive.sha256);
    expect(second.imported).toHaveLength(7);
    await expect(first).rejects.toMatchObject({ code: "conflict" });
    expect(stalled.destroyed).toBe(true);
    expect(leftovers(b.dataDir)).toEqual([]);
  });

  it("takes over an upload that has not started reading its body without an unhandled 'error'", async () => {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    const stalled = new PassThrough();
    // Both calls in one turn: the second destroys the first's body before anything reads it.
    const first = importInto(b.engine, "app", stalled, archive.sha256);
    first.catch(() => undefined);
    const second = importInto(b.engine, "app", archive.bytes, archive.sha256);
    expect((await second).imported).toHaveLength(7);
    await expect(first).rejects.toMatchObject({ code: "conflict" });
  });

  it("imports into an existing empty group, keeping the group", async () => {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    const group = await call<{ id: string }>(b.engine, "group.create", null, { name: "landing" });
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    const result = await importInto(b.engine, "landing", archive.bytes, archive.sha256);
    expect(result.group).toMatchObject({ id: group.id, name: "landing" });
    expect(result.group.primitives).toHaveLength(7);
  });

  it("refuses an offset when no upload is there (409)", async () => {
    const [a, b] = twoEngines();
    await seedEverything(a.engine);
    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    await expect(
      importInto(b.engine, "app", archive.bytes.subarray(100), archive.sha256, { offset: 100 }),
    ).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining("resume at offset 0") });
  });
});

describe("group archives: replace", () => {
  it("refuses a non-empty group without replace; with it, replaces same-name primitives in place after a snapshot", async () => {
    const [a, b] = twoEngines();
    // A: the archive's side.
    await call(a.engine, "group.create", null, { name: "app" });
    const aKv = await create(a.engine, "app", "cache", "kv");
    await call(a.engine, "kv.set", aKv.id, { key: "v", value: "from A" });
    const aDb = await create(a.engine, "app", "main", "db");
    await call(a.engine, "db.exec", aDb.id, { sql: "CREATE TABLE t (who TEXT)" });
    await call(a.engine, "db.exec", aDb.id, { sql: "INSERT INTO t VALUES ('A')" });
    const aVault = await create(a.engine, "app", "secrets", "vault");
    await call(a.engine, "vault.put", aVault.id, { name: "TOKEN", value: "token-of-a" });
    await call(a.engine, "vault.grant", aVault.id, { name: "TOKEN", allow: { hosts: ["127.0.0.1"] } });
    const aQueue = await create(a.engine, "app", "jobs", "queue");
    await call(a.engine, "queue.send", aQueue.id, { queue: "work", body: "from A" });
    await call(a.engine, "queue.receive", aQueue.id, { queue: "work" });
    const aStorage = await create(a.engine, "app", "objects", "storage");
    await call(a.engine, "storage.put", aStorage.id, { key: "o", body: Readable.from([Buffer.from("new")]) });

    // B: a group with same-name primitives (one of another type), and others of its own.
    await call(b.engine, "group.create", null, { name: "app" });
    const bKv = await create(b.engine, "app", "cache", "kv");
    await call(b.engine, "kv.set", bKv.id, { key: "v", value: "from B" });
    await call(b.engine, "kv.set", bKv.id, { key: "only-b", value: true });
    const bDb = await create(b.engine, "app", "main", "db");
    await call(b.engine, "db.exec", bDb.id, { sql: "CREATE TABLE t (who TEXT)" });
    await call(b.engine, "db.exec", bDb.id, { sql: "INSERT INTO t VALUES ('B'), ('B2')" });
    const bVault = await create(b.engine, "app", "secrets", "vault");
    await call(b.engine, "vault.put", bVault.id, { name: "TOKEN", value: "token-of-b" });
    await call(b.engine, "vault.grant", bVault.id, { name: "TOKEN", allow: { hosts: ["127.0.0.1"] } });
    const bQueue = await create(b.engine, "app", "jobs", "queue");
    await call(b.engine, "queue.send", bQueue.id, { queue: "work", body: "from B" });
    const bOther = await create(b.engine, "app", "local-only", "kv");
    await call(b.engine, "kv.set", bOther.id, { key: "x", value: 1 });
    const bObjects = await create(b.engine, "app", "objects", "fs"); // same name, another type

    const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
    await expect(importInto(b.engine, "app", archive.bytes, archive.sha256)).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("replace=true"),
    });
    // Refused before a byte was stored.
    const upload = await call<ImportStatus>(b.engine, "group.import_status", null, {
      group: "app",
      sha256: archive.sha256,
    });
    expect(upload.upload?.received).toBe(0);
    expect(await call(b.engine, "kv.get", bKv.id, { key: "v" })).toMatchObject({ value: "from B" });

    const stamp = b.clock.now();
    const result = await importInto(b.engine, "app", archive.bytes, archive.sha256, { replace: true });
    const byName = new Map(result.imported.map((p) => [`${p.type}/${p.name}`, p]));
    for (const [key, local, source] of [
      ["kv/cache", bKv, aKv],
      ["db/main", bDb, aDb],
      ["vault/secrets", bVault, aVault],
      ["queue/jobs", bQueue, aQueue],
    ] as const) {
      const entry = byName.get(key);
      expect(entry).toMatchObject({
        id: local.id,
        source_id: source.id,
        replaced: { snapshot: expect.stringMatching(/^snap_/) },
      });
      const snapshots = await call<Page<SnapshotInfo>>(b.engine, "primitive.snapshots", local.id, {});
      expect(snapshots.data).toEqual([
        { id: entry?.replaced?.snapshot, name: `pre-import-${stamp}`, created_at: stamp, primitive: local.id },
      ]);
    }
    const newStorage = byName.get("storage/objects");
    expect(newStorage).toMatchObject({ source_id: aStorage.id, replaced: null });
    expect(newStorage?.id).not.toBe(bObjects.id);
    expect(result.group.primitives).toHaveLength(7);

    // The replaced primitives hold A's data now.
    expect(await call(b.engine, "kv.get", bKv.id, { key: "v" })).toMatchObject({ value: "from A" });
    await expect(call(b.engine, "kv.get", bKv.id, { key: "only-b" })).rejects.toMatchObject({ code: "not_found" });
    const who = async () =>
      (await call<QueryResult>(b.engine, "db.query", bDb.id, { sql: "SELECT who FROM t ORDER BY who" })).rows;
    expect(await who()).toEqual([{ who: "A" }]);
    const bearer = async () => {
      const res = await call<FetchResult>(b.engine, "vault.fetch", bVault.id, {
        url: `${upstream.origin}/`,
        auth: { bearer: "TOKEN" },
      });
      return (JSON.parse(res.body) as { authorization: string }).authorization;
    };
    expect(await bearer()).toBe(sha256("Bearer token-of-a"));
    expect((await queueState(b.engine, bQueue.id)).map((j) => [j.body, j.status, j.attempts])).toEqual([
      ["from A", "ready", 1],
    ]);
    // Primitives the archive does not name are left alone.
    expect(await call(b.engine, "kv.get", bOther.id, { key: "x" })).toMatchObject({ value: 1, version: 1 });
    expect(await call(b.engine, "primitive.get", bObjects.id)).toMatchObject({ type: "fs", name: "objects" });
    expect(await call(b.engine, "primitive.snapshots", bOther.id, {})).toMatchObject({ data: [] });

    // Each pre-import snapshot brings the old data back.
    for (const local of [bKv, bDb, bVault, bQueue]) {
      await call(b.engine, "primitive.restore", local.id, { snapshot: `pre-import-${stamp}` });
    }
    expect(await call(b.engine, "kv.get", bKv.id, { key: "v" })).toMatchObject({ value: "from B" });
    expect(await call(b.engine, "kv.get", bKv.id, { key: "only-b" })).toMatchObject({ value: true });
    expect(await who()).toEqual([{ who: "B" }, { who: "B2" }]);
    expect(await bearer()).toBe(sha256("Bearer token-of-b"));
    expect((await queueState(b.engine, bQueue.id)).map((j) => [j.body, j.status])).toEqual([["from B", "ready"]]);
  });
});

describe("group archives: access", () => {
  it("refuses scoped principals (403 forbidden) on all three operations", async () => {
    const { engine } = testEngine();
    const group = await call<{ id: string }>(engine, "group.create", null, { name: "app" });
    const scoped: Principal = { kind: "scoped", workspace: "local", actor: "key:k", groupId: group.id, tools: null };
    const archive = await call<GroupArchive>(engine, "group.export", "app", {});
    const body = readFileSync(archive.archive.path);
    const calls: [string, string | null, unknown][] = [
      ["group.export", "app", {}],
      ["group.import_status", null, { group: "app" }],
      ["group.import", null, { group: "app", body: Readable.from([body]), sha256: archive.archive.sha256 }],
    ];
    for (const [op, target, input] of calls) {
      await expect(engine.invoke(scoped, op, target, input)).rejects.toMatchObject({ code: "forbidden" });
    }
    // whoami answers either, naming what it is.
    expect(await call(engine, "auth.whoami", null)).toEqual({
      workspace: "local",
      actor: "local",
      kind: "local",
      group: null,
      tools: null,
    });
    expect(await engine.invoke(scoped, "auth.whoami", null, {})).toEqual({
      workspace: "local",
      actor: "key:k",
      kind: "scoped",
      group: { id: group.id, name: "app" },
      tools: null,
    });
  });

  it("answers 404 for an archive of another group or one that does not exist, 400 for bad ids and recipients", async () => {
    const { engine } = testEngine();
    await call(engine, "group.create", null, { name: "app" });
    await call(engine, "group.create", null, { name: "other" });
    const other = await call<GroupArchive>(engine, "group.export", "other", {});
    await expect(call(engine, "group.export", "app", { archive: other.archive.id })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(call(engine, "group.export", "app", { archive: `arc_${"0".repeat(26)}` })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(call(engine, "group.export", "nope", {})).rejects.toMatchObject({ code: "not_found" });
    await expect(call(engine, "group.export", "app", { archive: "arc_../../etc" })).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(call(engine, "group.export", "app", { recipient: "not-a-key" })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("recipient"),
    });
    await expect(call(engine, "group.import_status", null, { group: "app", sha256: "ABC" })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});
