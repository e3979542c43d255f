// Every directory in a data directory is 0700 and every file 0600, after a workload that writes
// every primitive type, snapshots, restores, forks, exports and branches a db (the SQL host
// child creates the db's files), so other local users can read nothing.
import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { Cell } from "../../src/cell.js";
import { Engine } from "../../src/engine.js";
import { tempDir, testEngine } from "../helpers.js";

async function* bytes(n: number): AsyncIterable<Buffer> {
  yield Buffer.alloc(n, 7);
}

/** Every entry under `dir` with its permission bits, relative paths. */
function modes(dir: string): Map<string, { dir: boolean; mode: string }> {
  const out = new Map<string, { dir: boolean; mode: string }>();
  out.set(".", { dir: true, mode: (statSync(dir).mode & 0o777).toString(8) });
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const st = statSync(join(dir, entry));
    out.set(entry, { dir: st.isDirectory(), mode: (st.mode & 0o777).toString(8) });
  }
  return out;
}

function expectPrivate(dir: string): void {
  const wrong = [...modes(dir)].filter(([, m]) => m.mode !== (m.dir ? "700" : "600"));
  expect(wrong).toEqual([]);
}

describe("data directory modes", () => {
  it("keeps every directory 0700 and every file 0600 across every type, snapshot, fork, export and branch", {
    timeout: 30_000,
  }, async () => {
    const { engine, dataDir } = testEngine();
    const run = <T = unknown>(op: string, target: string | null, input: unknown) =>
      engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
    await run("group.create", null, { name: "g" });
    const create = async (type: string) =>
      (await run<PrimitiveInfo>("primitive.create", null, { name: type, type, group: "g" })).id;
    const ids: Record<string, string> = {};
    for (const type of ["db", "fs", "queue", "memory", "vault", "kv", "storage"]) ids[type] = await create(type);

    await run("kv.set", ids.kv as string, { key: "k", value: { a: 1 } });
    await run("queue.send", ids.queue as string, { queue: "jobs", body: { i: 1 } });
    await run("memory.remember", ids.memory as string, { kind: "fact", text: "the sky is blue" });
    await run("vault.put", ids.vault as string, { name: "TOKEN", value: "s3cret" });
    await run("fs.write", ids.fs as string, { path: "/a/b.txt", body: bytes(200_000) }); // a blob
    await run("storage.put", ids.storage as string, { key: "big", body: bytes(200_000) }); // a blob
    await run("storage.put", ids.storage as string, { key: "small", body: bytes(10) });
    await run("db.query", ids.db as string, { sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)" });
    await run("db.query", ids.db as string, { sql: "INSERT INTO t (v) VALUES ('x')" });
    await run("db.branch.create", ids.db as string, { name: "feature" });
    await run("db.query", ids.db as string, { sql: "INSERT INTO t (v) VALUES ('y')", branch: "feature" });

    for (const type of ["db", "kv", "storage", "fs"]) {
      const id = ids[type] as string;
      const snap = await run<{ id: string }>("primitive.snapshot", id, { name: "s1" });
      await run("primitive.fork", id, { name: `${type}-fork` });
      await run("primitive.fork", id, { name: `${type}-fork-snap`, snapshot: snap.id });
      await run("primitive.restore", id, { snapshot: snap.id });
    }
    for (const type of ["db", "kv", "storage"]) {
      const { download } = await run<{ download: { path: string } }>("primitive.export", ids[type] as string, {});
      expect((statSync(download.path).mode & 0o777).toString(8)).toBe("600");
    }
    expect(modes(dataDir).size).toBeGreaterThan(20);
    expectPrivate(dataDir);
  });

  it("keeps a cell's directory and its workspaces' directories 0700, an older 0755 one tightened", async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "ws_old"));
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, "ws_old"), 0o755);
    const cell = Cell.openLocal({ dataDir });
    try {
      for (const workspace of ["ws_new", "ws_old"]) {
        const engine = Engine.forWorkspace(cell, workspace);
        const owner = { kind: "account", workspace, actor: "key:k", groupId: null, tools: null } as const;
        await engine.invoke(owner, "group.create", null, { name: "g" });
        const kv = await engine.invoke<PrimitiveInfo>(owner, "primitive.create", null, {
          name: "c",
          type: "kv",
          group: "g",
        });
        await engine.invoke(owner, "kv.set", kv.id, { key: "k", value: 1 });
        await engine.invoke(owner, "primitive.snapshot", kv.id, {});
      }
      expect(modes(dataDir).get("ws_new")).toEqual({ dir: true, mode: "700" });
      expectPrivate(dataDir);
    } finally {
      await cell.close();
    }
  });

  it("tightens a data directory an older version left 0755 when it opens it", async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "primitives"));
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, "primitives"), 0o755);
    const engine = Engine.openLocal({ dataDir });
    try {
      await engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "g" });
      expectPrivate(dataDir);
    } finally {
      await engine.close();
    }
  });
});
