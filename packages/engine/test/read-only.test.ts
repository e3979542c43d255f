// Read-only principals (issue 40, item 3), from the registry: `engine.invoke` refuses every
// operation that writes for its input with 403 `forbidden` before anything happens (nothing in
// the group changes, no audit entry), whatever the target; every operation that only reads
// answers a read-only principal exactly what it answers the same principal without the flag.
// Each refusal is next to the rightful call: the same principal without the flag writes with the
// same input (here for the statements that decide; every route and tool with realistic inputs:
// apps/api/test/read-only-routes.test.ts and apps/mcp/test/read-only.test.ts).
import { LOCAL_PRINCIPAL, type PrimitiveInfo, type PrimitiveType, type Principal } from "@prim/wire";
import { describe, expect, it } from "vitest";
import type { Engine } from "../src/engine.js";
import { accessOf, mayWrite } from "../src/primitives/operation.js";
import { OPERATIONS } from "../src/registry.js";
import { testEngine } from "./helpers.js";

const READ_ONLY: Principal = { ...LOCAL_PRINCIPAL, readOnly: true };
const WRITES = new Set(OPERATIONS.filter(mayWrite).map((op) => op.name));
const TYPES: PrimitiveType[] = ["db", "fs", "queue", "memory", "vault", "kv", "storage"];

/** Inputs that make an operation decided by its input write (a PUT URL, a writing statement). */
const WRITING_INPUTS: unknown[] = [
  { key: "obj.txt", method: "PUT" },
  { sql: "INSERT INTO t VALUES ('ro')" },
  { statements: [{ sql: "SELECT 1" }, { sql: "INSERT INTO t VALUES ('ro')" }] },
];

async function* text(value: string): AsyncIterable<Buffer> {
  yield Buffer.from(value);
}

/** A group `g` with one primitive of each type, each holding data; answers the ids by type. */
async function seeded(engine: Engine): Promise<Record<PrimitiveType, string>> {
  const run = <T = unknown>(op: string, target: string | null, input: unknown) =>
    engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
  await run("group.create", null, { name: "g" });
  const ids = {} as Record<PrimitiveType, string>;
  for (const type of TYPES)
    ids[type] = (await run<PrimitiveInfo>("primitive.create", null, { name: type, type, group: "g" })).id;
  await run("kv.set", ids.kv, { key: "k", value: 1 });
  await run("db.batch", ids.db, {
    statements: [{ sql: "CREATE TABLE t (v TEXT)" }, { sql: "INSERT INTO t VALUES ('x')" }],
  });
  await run("storage.put", ids.storage, { key: "obj.txt", body: text("object") });
  await run("fs.write", ids.fs, { path: "/dir/file.txt", body: text("file") });
  await run("queue.send", ids.queue, { queue: "q", body: 1 });
  await run("memory.remember", ids.memory, { kind: "fact", text: "remembered" });
  await run("vault.put", ids.vault, { name: "SECRET", value: "s3cret" });
  await run("primitive.snapshot", ids.kv, { name: "snap" });
  return ids;
}

/** What the group holds, read through the engine (equal before and after: nothing changed). */
async function state(engine: Engine, ids: Record<PrimitiveType, string>): Promise<unknown[]> {
  const read = (op: string, target: string | null, input: unknown = {}) =>
    engine.invoke(LOCAL_PRINCIPAL, op, target, input);
  return [
    await read("group.list", null),
    await read("primitive.list", null),
    await read("kv.list", ids.kv, { values: true }),
    await read("db.query", ids.db, { sql: "SELECT v FROM t ORDER BY v" }),
    await read("db.branch.list", ids.db),
    await read("storage.list", ids.storage),
    await read("fs.glob", ids.fs, { pattern: "**" }),
    await read("queue.queues", ids.queue),
    await read("memory.list", ids.memory),
    await read("vault.list", ids.vault),
    await read("vault.grants", ids.vault),
    await read("primitive.snapshots", ids.kv),
    // The trail of writes (reads are audited too, the ones above among them).
    ((await read("audit.list", null, { limit: 200 })) as { data: { action: string }[] }).data.filter((e) =>
      WRITES.has(e.action),
    ),
  ];
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (err: { code?: string }) => err.code ?? String(err),
  );

describe("a read-only principal", () => {
  it("is refused every operation that writes (403 forbidden) before anything happens, on any target", async () => {
    const { engine } = testEngine();
    const ids = await seeded(engine);
    const before = await state(engine, ids);
    const wrong: string[] = [];
    let refused = 0;
    for (const op of OPERATIONS.filter(mayWrite)) {
      const inputs = typeof op.access === "function" ? WRITING_INPUTS.filter((i) => accessOf(op, i) === "write") : [{}];
      expect(inputs.length, op.name).toBeGreaterThan(0);
      const target = op.target === "primitive" ? ids[op.type ?? "kv"] : op.target === "group" ? "g" : null;
      // The primitive named, one that does not exist, and the group's other types: the refusal
      // is decided before any lookup, so it says nothing about what exists.
      for (const input of inputs) {
        for (const t of op.target === "primitive" ? [target, "missing"] : [target]) {
          const err = await engine.invoke(READ_ONLY, op.name, t, input).then(
            () => null,
            (e: { code?: string; message?: string }) => e,
          );
          if (err?.code !== "forbidden" || !err.message?.includes("read-only")) {
            wrong.push(`${op.name} on ${t}: ${err === null ? "ran" : `${err.code} ${err.message}`}`);
          }
          refused++;
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(refused).toBeGreaterThan(60);
    expect(await state(engine, ids)).toEqual(before);
  });

  it("answers every operation that only reads exactly as without the flag", async () => {
    const { engine } = testEngine();
    const ids = await seeded(engine);
    const different: string[] = [];
    for (const op of OPERATIONS.filter((o) => o.access === "read")) {
      const target = op.target === "primitive" ? ids[op.type ?? "kv"] : op.target === "group" ? "g" : null;
      for (const input of [{}, { key: "k" }, { sql: "SELECT v FROM t" }, { path: "/dir/file.txt" }]) {
        const rw = await outcome(engine.invoke(LOCAL_PRINCIPAL, op.name, target, input));
        const ro = await outcome(engine.invoke(READ_ONLY, op.name, target, input));
        if (ro !== rw) different.push(`${op.name} ${JSON.stringify(input)}: ${ro}, not ${rw}`);
      }
    }
    expect(different).toEqual([]);
  });

  it("reads through /exec and a batch of SELECTs; SQL that writes through db.query is refused; the rightful caller writes", async () => {
    const { engine } = testEngine();
    const ids = await seeded(engine);
    const rows = async () =>
      ((await engine.invoke(LOCAL_PRINCIPAL, "db.query", ids.db, { sql: "SELECT v FROM t" })) as { rows: unknown[] })
        .rows;
    const selected = (await engine.invoke(READ_ONLY, "db.exec", ids.db, { sql: "SELECT v FROM t" })) as {
      rows: unknown[];
    };
    expect(selected.rows).toEqual([{ v: "x" }]);
    const batch = { statements: [{ sql: "SELECT 1 AS a" }, { sql: "SELECT v FROM t" }] };
    expect(await outcome(engine.invoke(READ_ONLY, "db.batch", ids.db, batch))).toBe("ok");
    for (const sql of [
      "INSERT INTO t VALUES ('q')",
      "DELETE FROM t",
      "PRAGMA user_version = 3",
      "CREATE TABLE u (v)",
    ]) {
      expect([sql, await outcome(engine.invoke(READ_ONLY, "db.query", ids.db, { sql }))]).toEqual([sql, "forbidden"]);
    }
    for (const input of WRITING_INPUTS.slice(1)) {
      const op = "statements" in (input as object) ? "db.batch" : "db.exec";
      expect(await outcome(engine.invoke(READ_ONLY, op, ids.db, input))).toBe("forbidden");
    }
    expect(await rows()).toEqual([{ v: "x" }]);
    const version = (await engine.invoke(LOCAL_PRINCIPAL, "db.query", ids.db, { sql: "PRAGMA user_version" })) as {
      rows: unknown[];
    };
    expect(version.rows).toEqual([{ user_version: 0 }]);
    // The same inputs, without the flag: each writes.
    await engine.invoke(LOCAL_PRINCIPAL, "db.exec", ids.db, WRITING_INPUTS[1]);
    await engine.invoke(LOCAL_PRINCIPAL, "db.batch", ids.db, WRITING_INPUTS[2]);
    expect(await rows()).toHaveLength(3);
  });
});
