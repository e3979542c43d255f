import { existsSync } from "node:fs";
import { join } from "node:path";
import type { PrimitiveInfo, Principal } from "@prim/wire";
import { afterEach, describe, expect, it } from "vitest";
import { Cell } from "../src/cell.js";
import { ManualClock } from "../src/core/clock.js";
import { Engine } from "../src/engine.js";
import { tempDir, testEngine } from "./helpers.js";

async function* bytes(n: number): AsyncIterable<Buffer> {
  yield Buffer.alloc(n, 7);
}

const open: Cell[] = [];
afterEach(async () => {
  for (const cell of open.splice(0)) await cell.close();
});

const owner = (workspace: string): Principal => ({
  kind: "account",
  workspace,
  actor: `key:${workspace}`,
  groupId: null,
  tools: null,
});

/** One workspace with a group `app`, a kv `cache` holding `k`, a db `main`, and a snapshot of the kv. */
async function seed(engine: Engine, who: Principal) {
  const group = await engine.invoke<{ id: string }>(who, "group.create", null, { name: "app" });
  const kv = await engine.invoke<PrimitiveInfo>(who, "primitive.create", null, {
    name: "cache",
    type: "kv",
    group: "app",
  });
  await engine.invoke(who, "kv.set", kv.id, { key: "k", value: who.workspace });
  const db = await engine.invoke<PrimitiveInfo>(who, "primitive.create", null, {
    name: "main",
    type: "db",
    group: "app",
  });
  await engine.invoke(who, "db.exec", db.id, { sql: "CREATE TABLE t (v TEXT)" });
  const snapshot = await engine.invoke<{ id: string }>(who, "primitive.snapshot", kv.id, {});
  return { group, kv, db, snapshot };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
  return "no error";
}

async function twoTenants() {
  const dataDir = tempDir();
  const cell = Cell.openLocal({ dataDir, clock: new ManualClock(1_800_000_000_000) });
  open.push(cell);
  const a = Engine.forWorkspace(cell, "ws_a");
  const b = Engine.forWorkspace(cell, "ws_b");
  const alice = owner("ws_a");
  const bob = owner("ws_b");
  return { dataDir, cell, a, b, alice, bob, seedA: await seed(a, alice), seedB: await seed(b, bob) };
}

describe("two engines over one cell", () => {
  it("share the cell's SQL host pool and signer, and keep their own catalog and directory", async () => {
    const { dataDir, a, b } = await twoTenants();
    expect(a.services.sqlHost).toBe(b.services.sqlHost);
    expect(a.services.signer).toBe(b.services.signer);
    // One audit writer thread appends to both tenants' audit files; each reads only its own.
    await a.services.audit.flush();
    await b.services.audit.flush();
    const actors = async (engine: Engine, who: Principal) =>
      new Set(
        (await engine.invoke<{ data: { actor: string }[] }>(who, "audit.list", null, { limit: 100 })).data.map(
          (e) => e.actor,
        ),
      );
    expect(await actors(a, owner("ws_a"))).toEqual(new Set(["key:ws_a"]));
    expect(await actors(b, owner("ws_b"))).toEqual(new Set(["key:ws_b"]));
    expect(a.services.catalog).not.toBe(b.services.catalog);
    expect(a.services.namespace).toBe("ws_a");
    expect(existsSync(join(dataDir, "ws_a", "catalog.sqlite"))).toBe(true);
    expect(existsSync(join(dataDir, "ws_b", "catalog.sqlite"))).toBe(true);
  });

  it("answers 404 not_found for another workspace's primitive, group and snapshot, whatever the route", async () => {
    const { b, bob, seedA, seedB } = await twoTenants();
    const notFound = async (p: Promise<unknown>) => expect(await codeOf(p)).toBe("not_found");
    await notFound(b.invoke(bob, "kv.get", seedA.kv.id, { key: "k" }));
    await notFound(b.invoke(bob, "primitive.get", seedA.kv.id, {}));
    await notFound(b.invoke(bob, "primitive.delete", seedA.kv.id, {}));
    await notFound(b.invoke(bob, "db.query", seedA.db.id, { sql: "SELECT 1" }));
    await notFound(b.invoke(bob, "primitive.snapshot", seedA.kv.id, {}));
    await notFound(b.invoke(bob, "primitive.fork", seedA.kv.id, {}));
    await notFound(b.invoke(bob, "group.get", seedA.group.id, {}));
    await notFound(b.invoke(bob, "group.delete", seedA.group.id, {}));
    // B's own primitive forked into A's group (by id), and restored from A's snapshot (by id).
    await notFound(b.invoke(bob, "primitive.fork", seedB.kv.id, { group: seedA.group.id }));
    await notFound(b.invoke(bob, "primitive.restore", seedB.kv.id, { snapshot: seedA.snapshot.id }));
    // The same names resolve to B's own records.
    const group = await b.invoke<{ id: string }>(bob, "group.get", "app", {});
    expect(group.id).toBe(seedB.group.id);
    expect(await b.invoke(bob, "kv.get", seedB.kv.id, { key: "k" })).toMatchObject({ value: "ws_b" });
  });

  it("refuses a principal of another workspace with 401 invalid_token before any lookup", async () => {
    const { b, alice, seedA, seedB } = await twoTenants();
    expect(await codeOf(b.invoke(alice, "kv.get", seedA.kv.id, { key: "k" }))).toBe("invalid_token");
    expect(await codeOf(b.invoke(alice, "kv.get", seedB.kv.id, { key: "k" }))).toBe("invalid_token");
    expect(await codeOf(b.invoke(alice, "group.list", null, {}))).toBe("invalid_token");
    expect(await codeOf(b.invoke(alice, "group.create", null, { name: "x" }))).toBe("invalid_token");
  });

  it("closing one tenant leaves the shared parts running for the other; closing the cell stops all", async () => {
    const { dataDir, cell, a, b, bob, seedB } = await twoTenants();
    await a.close();
    const rows = await b.invoke<{ rows: unknown[] }>(bob, "db.query", seedB.db.id, {
      sql: "SELECT count(*) AS n FROM t",
    });
    expect(rows.rows).toEqual([{ n: 0 }]);
    // The shared audit writer still stores B's entries (flush resolves only once they are stored).
    await b.invoke(bob, "kv.set", seedB.kv.id, { key: "after", value: 1 });
    await b.services.audit.flush();
    const trail = await b.invoke<{ data: { action: string }[] }>(bob, "audit.list", null, { limit: 1 });
    expect(trail.data[0]?.action).toBe("kv.set");
    // The workspace can be opened again once its engine closed, and only then.
    expect(() => Engine.forWorkspace(cell, "ws_b")).toThrow(/already has an open engine/);
    const again = Engine.forWorkspace(cell, "ws_a");
    expect(await again.invoke(owner("ws_a"), "group.get", "app", {})).toMatchObject({ name: "app" });
    await cell.close();
    // Every tenant and the lock were released: the directory opens again.
    const reopened = Cell.openLocal({ dataDir });
    open.push(reopened);
    const b2 = Engine.forWorkspace(reopened, "ws_b");
    expect(await b2.invoke(bob, "kv.get", seedB.kv.id, { key: "k" })).toMatchObject({ value: "ws_b" });
  });

  it("keeps blobs per tenant: one tenant's collector never deletes another's blobs", async () => {
    const { a, b, alice, bob } = await twoTenants();
    const store = await a.invoke<PrimitiveInfo>(alice, "primitive.create", null, {
      name: "files",
      type: "storage",
      group: "app",
    });
    await a.invoke(alice, "storage.put", store.id, { key: "big", body: bytes(200_000) }); // a blob, not inline
    await a.services.blobCollector.collect(0);
    await b.services.blobCollector.collect(0);
    const hashes = async (engine: Engine) => {
      const out: string[] = [];
      for await (const blob of engine.services.blobs.list()) out.push(blob.hash);
      return out;
    };
    expect(await hashes(a)).toHaveLength(1);
    expect(await hashes(b)).toHaveLength(0);
    const read = await a.invoke<{ size?: number; info?: { size: number } }>(alice, "storage.read", store.id, {
      key: "big",
      stat: true,
    });
    expect(JSON.stringify(read)).toContain("200000");
    expect(await codeOf(b.invoke(bob, "storage.read", store.id, { key: "big" }))).toBe("not_found");
  });

  it("refuses workspace ids that are not safe directory names", () => {
    const cell = Cell.openLocal({ dataDir: tempDir() });
    open.push(cell);
    expect(() => Engine.forWorkspace(cell, "../x")).toThrow(/invalid workspace id/);
  });
});

describe("Engine.openLocal", () => {
  it("keeps the local layout: one tenant `local` directly in the data directory", async () => {
    const { engine, dataDir } = testEngine();
    expect(engine.services.namespace).toBe("local");
    for (const name of ["catalog.sqlite", "signing.key", "master.key", "keys.sqlite", "primitives", "blobs"]) {
      expect(existsSync(join(dataDir, name)), name).toBe(true);
    }
    expect(existsSync(join(dataDir, "local"))).toBe(false);
  });
});
