import { PassThrough, Readable } from "node:stream";
import type { FetchResult, ImportStatus, Page, QueryResult, SnapshotInfo } from "@prim/wire";
import { describe, expect, it } from "vitest";
import {
  call,
  create,
  exportFor,
  importInto,
  leftovers,
  objectOf,
  queueState,
  recipientOf,
  STORAGE_BIG,
  seedEverything,
  sha256,
  twoEngines,
  useLoopbackUpstream,
} from "./fixtures.js";

/**
 * Group imports that pick up or take over: an upload resumed from the offset where its
 * connection dropped, a newer upload of the same archive taking over a stalled one, an import
 * into an existing empty group, and replace in place (same-name primitives snapshotted first,
 * the rest left alone). Everything runs for real: two local engines on temp dirs, a loopback
 * HTTP server for the vault's injected credentials.
 */

const upstream = useLoopbackUpstream();

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
