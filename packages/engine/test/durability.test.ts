// Durable acknowledgements (sqlite/durable-sync.ts): which calls wait for an fsync, how
// concurrent writers share one, and the per-primitive setting. That an acknowledged durable
// write survives a power cut is proven by packages/cli/test/power-loss.test.ts.
import { Readable } from "node:stream";
import { LOCAL_PRINCIPAL as local, type PrimitiveInfo, type PrimitiveStats } from "@prim/wire";
import { describe, expect, it } from "vitest";
import type { Engine } from "../src/engine.js";
import { testEngine } from "./helpers.js";

async function primitive(engine: Engine, type: string, name = type): Promise<PrimitiveInfo> {
  return engine.invoke<PrimitiveInfo>(local, "primitive.create", null, { name, type, group: "app" });
}

async function durableEngine() {
  const t = testEngine({ durability: "durable" });
  await t.engine.invoke(local, "group.create", null, { name: "app" });
  return { ...t, syncs: t.engine.services.syncs };
}

/** fsyncs made while `work` ran. */
async function fsyncsDuring(engine: Engine, work: () => Promise<unknown>): Promise<number> {
  const before = engine.services.syncs.fsyncs;
  await work();
  return engine.services.syncs.fsyncs - before;
}

describe("durable acknowledgements", () => {
  it("answers a write of every engine-file type only after an fsync; a read makes none", async () => {
    const { engine } = await durableEngine();
    const writes: [string, string, unknown][] = [
      ["kv", "kv.set", { key: "a", value: "x" }],
      ["queue", "queue.send", { queue: "jobs", body: { n: 1 } }],
      ["memory", "memory.remember", { kind: "fact", text: "the deploy key rotates on Mondays" }],
      ["vault", "vault.put", { name: "TOKEN", value: "s3cret" }],
      ["fs", "fs.write", { path: "/a.txt", body: Readable.from([Buffer.from("hello")]) }],
      ["storage", "storage.put", { key: "o", body: Readable.from([Buffer.from("bytes")]) }],
    ];
    for (const [type, op, input] of writes) {
      const p = await primitive(engine, type);
      expect(p.durability).toBe("durable");
      expect(await fsyncsDuring(engine, () => engine.invoke(local, op, p.id, input)), op).toBeGreaterThan(0);
    }
    const kv = (await engine.invoke<{ data: PrimitiveInfo[] }>(local, "primitive.list", null, { type: "kv" })).data[0];
    expect(await fsyncsDuring(engine, () => engine.invoke(local, "kv.get", kv?.id as string, { key: "a" }))).toBe(0);
    expect(await fsyncsDuring(engine, () => engine.invoke(local, "primitive.get", kv?.id as string, {}))).toBe(0);
  });

  it("lets concurrent writers share fsyncs: 200 kv writes at once take far fewer than 200", async () => {
    const { engine } = await durableEngine();
    const kv = await primitive(engine, "kv");
    const before = { ...engine.services.syncs };
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => engine.invoke(local, "kv.set", kv.id, { key: `k${i}`, value: i })),
    );
    const fsyncs = engine.services.syncs.fsyncs - before.fsyncs;
    expect(engine.services.syncs.writes - before.writes).toBe(200);
    expect(fsyncs).toBeGreaterThan(0);
    expect(fsyncs).toBeLessThan(20);
  });

  it("fsyncs the catalog for lifecycle writes and the SQL host's files for db writes, not for db reads", async () => {
    const { engine } = await durableEngine();
    expect(await fsyncsDuring(engine, () => primitive(engine, "kv", "made"))).toBeGreaterThan(0);
    const db = await primitive(engine, "db");
    const exec = (sql: string) => engine.invoke(local, "db.exec", db.id, { sql });
    expect(await fsyncsDuring(engine, () => exec("CREATE TABLE t (x)"))).toBeGreaterThan(0);
    expect(await fsyncsDuring(engine, () => exec("INSERT INTO t VALUES (1)"))).toBeGreaterThan(0);
    expect(await fsyncsDuring(engine, () => exec("SELECT * FROM t"))).toBe(0);
    expect(await fsyncsDuring(engine, () => engine.invoke(local, "db.tables", db.id, {}))).toBe(0);
    expect(
      await fsyncsDuring(engine, () => engine.invoke(local, "db.branch.create", db.id, { name: "b" })),
    ).toBeGreaterThan(0);
  });

  it("makes no fsync in a fast engine until a primitive is set durable, and PATCH null goes back", async () => {
    const { engine, dataDir } = testEngine();
    await engine.invoke(local, "group.create", null, { name: "app" });
    const kv = await primitive(engine, "kv");
    expect(kv.durability).toBe("fast");
    expect(await fsyncsDuring(engine, () => engine.invoke(local, "kv.set", kv.id, { key: "a", value: 1 }))).toBe(0);

    const updated = await engine.invoke<PrimitiveInfo>(local, "primitive.update", kv.id, { durability: "durable" });
    expect(updated.durability).toBe("durable");
    const stats = await engine.invoke<PrimitiveStats>(local, "primitive.stats", kv.id, {});
    expect(stats.durability).toBe("durable");
    expect(await fsyncsDuring(engine, () => engine.invoke(local, "kv.set", kv.id, { key: "b", value: 2 }))).toBe(1);
    // Another primitive keeps the engine's setting.
    const other = await primitive(engine, "kv", "other");
    expect(await fsyncsDuring(engine, () => engine.invoke(local, "kv.set", other.id, { key: "a", value: 1 }))).toBe(0);

    // The setting is in the catalog: it survives a restart.
    await engine.close();
    const reopened = testEngine({ dataDir }).engine;
    expect((await reopened.invoke<PrimitiveInfo>(local, "primitive.get", kv.id, {})).durability).toBe("durable");
    const reset = await reopened.invoke<PrimitiveInfo>(local, "primitive.update", kv.id, { durability: null });
    expect(reset.durability).toBe("fast");
    expect(await fsyncsDuring(reopened, () => reopened.invoke(local, "kv.set", kv.id, { key: "c", value: 3 }))).toBe(0);
  });

  it("refuses a durability that is not fast or durable with 400 invalid_request", async () => {
    const { engine } = await durableEngine();
    const kv = await primitive(engine, "kv");
    await expect(engine.invoke(local, "primitive.update", kv.id, { durability: "eventually" })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/durability.*fast, durable/),
    });
    expect((await engine.invoke<PrimitiveInfo>(local, "primitive.get", kv.id, {})).durability).toBe("durable");
  });
});
