// A memory file made before versions (fixtures/memory-v1.sqlite, written by the engine as it
// was before memory history; fixtures/README.md says how) opened by today's engine: migrated in
// place, its memories, recall and history work.
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { MemoryRecord, MemoryVersion, Page, PrimitiveInfo, RecalledMemory } from "@prim/wire";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LOCAL_PRINCIPAL } from "../../src/index.js";
import { testEngine } from "../helpers.js";

const FIXTURE = join(import.meta.dirname, "../fixtures/memory-v1.sqlite");
/** What the fixture holds (ids and times printed by the script that made it). */
const OLD = {
  tea: "mem_01mcc5rmz8362p0dgmwa7fs319",
  office: "mem_01mcc5rnyggg5fw1psq6d7vn4b",
  moved: "mem_01mcc5rqx0dfc7fwv288zts83p",
  secret: "mem_01mcc5rpxr3d5pc4xpbrep1fnz",
  start: 1_800_000_000_000,
};

/** The fixture opened by today's engine; `older` may first change the copy (e.g. drop a table). */
async function engineWithOldFile(older?: (db: Database.Database) => void) {
  const first = testEngine();
  const { engine, dataDir, clock } = first;
  await engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  const memory = await engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: "notes",
    type: "memory",
    group: "app",
  });
  const path = engine.services.files.path(memory.id);
  await engine.close();
  for (const suffix of ["-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  copyFileSync(FIXTURE, path);
  if (older !== undefined) {
    const db = new Database(path);
    older(db);
    db.close();
  }
  clock.set(OLD.start + 60_000);
  const reopened = testEngine({ dataDir, clock }).engine;
  const invoke = <T>(op: string, input: unknown) => reopened.invoke<T>(LOCAL_PRINCIPAL, op, memory.id, input);
  return { invoke, clock, path, engine: reopened };
}

describe("memory: a file made before versions", () => {
  it("is migrated in place: memories, recall, history and new versions all work", async () => {
    const { invoke, clock, path, engine } = await engineWithOldFile();
    const tea = await invoke<MemoryRecord>("memory.get", { id: OLD.tea });
    expect(tea).toMatchObject({
      text: "Ada prefers green tea in the morning.",
      tags: ["ada", "drinks"],
      owner: "ada",
      metadata: { source: "chat" },
      version: 1,
    });
    const office = await invoke<MemoryRecord>("memory.get", { id: OLD.office });
    expect(office).toMatchObject({ superseded_by: OLD.moved, version: 2 });
    // The forgotten memory was deleted by the old code: still gone.
    await expect(invoke("memory.get", { id: OLD.secret })).rejects.toMatchObject({ code: "not_found" });

    const recall = async (input: Record<string, unknown>) =>
      (await invoke<{ data: RecalledMemory[] }>("memory.recall", input)).data.map((m) => m.id);
    expect(await recall({ query: "office floor" })).toEqual([OLD.moved]);
    expect(await recall({ query: "green tea", kinds: ["preference"], tags: ["ada"] })).toEqual([OLD.tea]);
    // As of before the supersede (made at start + 4 s), the office was on the third floor.
    expect(await recall({ query: "office floor", as_of: OLD.start + 3500 })).toEqual([OLD.office]);

    const history = await invoke<Page<MemoryVersion>>("memory.history", { id: OLD.office });
    expect(history.data.map((v) => [v.version, v.op, v.at, v.superseded_by])).toEqual([
      [2, "supersede", OLD.start + 4000, OLD.moved],
      [1, "create", office.created_at, null],
    ]);

    clock.advance(1000);
    const changed = await invoke<MemoryRecord>("memory.remember", {
      id: OLD.tea,
      kind: "preference",
      text: "Ada prefers black coffee in the morning.",
      if_version: 1,
    });
    expect(changed).toMatchObject({ version: 2, tags: ["ada", "drinks"] });
    await expect(
      invoke("memory.remember", { id: OLD.tea, kind: "preference", text: "again", if_version: 1 }),
    ).rejects.toMatchObject({ code: "precondition_failed" });
    expect(await recall({ query: "coffee" })).toEqual([OLD.tea]);
    expect(await recall({ query: "green tea" })).toEqual([]);
    expect(await recall({ query: "green tea", as_of: OLD.start + 3500 })).toEqual([OLD.tea]);
    const teaHistory = await invoke<Page<MemoryVersion>>("memory.history", { id: OLD.tea });
    expect(teaHistory.data.map((v) => [v.op, v.text])).toEqual([
      ["update", "Ada prefers black coffee in the morning."],
      ["create", "Ada prefers green tea in the morning."],
    ]);

    // Migrated once: the file now has the new columns, and reopening changes nothing.
    await engine.close();
    const db = new Database(path, { readonly: true });
    const columns = (db.prepare("PRAGMA table_info(memories)").all() as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(["version", "superseded_at", "forgotten_at"]));
    expect((db.prepare("SELECT count(*) AS n FROM memory_versions").get() as { n: number }).n).toBe(2);
    db.close();
  });

  it("builds the FTS5 index from the rows when the file has none", async () => {
    // A file from before the FTS5 index: no memories_fts, no triggers feeding it.
    const { invoke, path, engine } = await engineWithOldFile((db) => {
      db.exec(`DROP TRIGGER memories_after_insert; DROP TRIGGER memories_after_delete;
        DROP TABLE memories_fts;`);
    });
    const recall = async (input: Record<string, unknown>) =>
      (await invoke<{ data: RecalledMemory[] }>("memory.recall", input)).data.map((m) => m.id);
    expect(await recall({ query: "office floor" })).toEqual([OLD.moved]);
    expect(await recall({ query: "office floor", include_superseded: true })).toEqual(
      expect.arrayContaining([OLD.office, OLD.moved]),
    );
    expect(await recall({ query: "green tea", owner: "ada" })).toEqual([OLD.tea]);
    // New writes are indexed in their own transaction, by the triggers the open created.
    const added = await invoke<MemoryRecord>("memory.remember", { kind: "fact", text: "The printer is on floor two." });
    expect(await recall({ query: "printer" })).toEqual([added.id]);
    await engine.close();
    const db = new Database(path);
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    expect(count("SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH 'floor'")).toBe(3);
    // The index agrees with the rows (FTS5 compares them with rank 1; it throws if not).
    db.exec("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)");
    db.close();
  });
});
