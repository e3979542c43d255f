import { readFileSync } from "node:fs";
import type {
  FsRead,
  GroupArchive,
  ImportStatus,
  Job,
  MemoryRecord,
  Page,
  PrimitiveInfo,
  QueryResult,
} from "@prim/wire";
import { describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import { testEngine } from "../helpers.js";
import {
  API_KEY,
  call,
  create,
  exportFor,
  FS_BIG,
  fileOf,
  importInto,
  injected,
  leftovers,
  listing,
  manifestOf,
  objectOf,
  queueState,
  recipientOf,
  STORAGE_BIG,
  seedEverything,
  sha256,
  TOKEN,
  tarEntries,
  twoEngines,
  useLoopbackUpstream,
} from "./fixtures.js";

/**
 * Group archives (`group.export`, `group.import`) that go through: a group of every type moved
 * between two engines with different master keys (same content, new ids), an archive sealed for
 * the exporting engine by default, the same archive answered again by id, and a consistent copy
 * while writers continue. Everything runs for real: local engines on temp dirs, a loopback HTTP
 * server for the vault's injected credentials.
 */

const upstream = useLoopbackUpstream();

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
    expect(await injected(a.engine, src.vault.id, upstream)).toEqual(expected);
    expect(await injected(b.engine, copy(src.vault), upstream)).toEqual(expected);

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
    expect(await injected(a.engine, vault, upstream)).toEqual({
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
