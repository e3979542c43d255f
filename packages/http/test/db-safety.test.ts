import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDb, dbOn, withDb } from "./db-helpers.js";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-db-safety-"));
  temps.push(dir);
  return dir;
}

/** Runs forever unless interrupted. */
const RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";

/** The durability settings the engine gives every connection. */
async function engineSettings(q: (sql: string) => Promise<{ body: any }>) {
  const journal = (await q("SELECT journal_mode FROM pragma_journal_mode")).body.rows[0].journal_mode;
  const sync = (await q("SELECT synchronous FROM pragma_synchronous")).body.rows[0].synchronous;
  return { journal, sync };
}

async function seeded() {
  const server = await withDb();
  await server.q("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await server.q("INSERT INTO t (v) VALUES ('kept')");
  return server;
}

describe("db: refused statements", () => {
  it("answers 403 forbidden to ATTACH and DETACH, however they are written", async () => {
    const { q } = await seeded();
    const dir = tempDir();
    for (const sql of [
      `ATTACH DATABASE '${join(dir, "x.db")}' AS x`,
      `attach '${join(dir, "y.db")}' as y`,
      `/* hello */ -- there\n  ATTACH '${join(dir, "z.db")}' AS z`,
      "DETACH DATABASE x",
      `EXPLAIN ATTACH '${join(dir, "e.db")}' AS e`,
    ]) {
      const res = await q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code, sql).toBe("forbidden");
    }
    expect(existsSync(join(dir, "x.db")) || existsSync(join(dir, "y.db")) || existsSync(join(dir, "z.db"))).toBe(false);
    // Nothing got attached: only main's tables are listed.
    const schemas = await q("SELECT DISTINCT schema FROM pragma_table_list WHERE schema <> 'temp'");
    expect(schemas.body.rows).toEqual([{ schema: "main" }]);
  });

  it("answers 403 forbidden to pragma functions outside the read-only allowlist (the file's path stays hidden)", async () => {
    const { q, batch } = await seeded();
    for (const sql of [
      "select * from pragma_database_list",
      'SELECT file FROM "pragma_database_list"',
      "SELECT file FROM main.PRAGMA_DATABASE_LIST",
      "SELECT (SELECT file FROM [pragma_database_list] LIMIT 1) AS f",
      "WITH d AS (SELECT * FROM `pragma_database_list`) SELECT * FROM d",
      "CREATE VIEW leak AS SELECT file FROM pragma_database_list",
      "SELECT * FROM pragma_temp_store_directory",
    ]) {
      const res = await q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code, sql).toBe("forbidden");
      expect(JSON.stringify(res.body), sql).not.toContain(tmpdir());
    }
    const inBatch = await batch([{ sql: "SELECT 1" }, { sql: "SELECT * FROM pragma_database_list" }]);
    expect(inBatch.status).toBe(403);
    expect(inBatch.body.error.message).toMatch(/^statements\[1\]: pragma_database_list is not allowed/);
    expect((await q("SELECT name FROM sqlite_schema WHERE type = 'view'")).body.rows).toEqual([]);
    // The allowlisted ones answer, and a string that merely says it is only a value.
    expect((await q("SELECT name FROM pragma_table_info('t') ORDER BY cid")).body.rows).toEqual([
      { name: "id" },
      { name: "v" },
    ]);
    expect((await q("SELECT 'pragma_database_list' AS s")).body.rows).toEqual([{ s: "pragma_database_list" }]);
  });

  it("answers 403 forbidden to VACUUM and VACUUM INTO, writing no file", async () => {
    const { q } = await seeded();
    const target = join(tempDir(), "copy.db");
    for (const sql of ["VACUUM", `VACUUM INTO '${target}'`, `vacuum main into '${target}'`]) {
      const res = await q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect(existsSync(target)).toBe(false);
  });

  it("answers 403 forbidden to transaction control in /query and in /batch", async () => {
    const { q, batch } = await seeded();
    for (const sql of ["BEGIN", "BEGIN IMMEDIATE", "COMMIT", "END", "ROLLBACK", "SAVEPOINT s", "RELEASE s"]) {
      const res = await q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const res = await batch([{ sql: "INSERT INTO t (v) VALUES ('x')" }, { sql: "COMMIT" }]);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("statements[1]");
    expect((await q("SELECT count(*) AS c FROM t")).body.rows).toEqual([{ c: 1 }]);
  });

  it("allows read-only introspection pragmas and refuses engine pragmas and assignments", async () => {
    const { q } = await seeded();
    for (const sql of [
      "PRAGMA table_info(t)",
      "PRAGMA user_version",
      "PRAGMA integrity_check",
      "pragma main.page_count",
    ]) {
      expect((await q(sql)).status, sql).toBe(200);
    }
    for (const sql of [
      "PRAGMA journal_mode = DELETE",
      "PRAGMA journal_mode",
      "PRAGMA synchronous = OFF",
      "PRAGMA main.synchronous=0",
      "PRAGMA foreign_keys = OFF",
      "PRAGMA writable_schema = ON",
      "PRAGMA locking_mode = EXCLUSIVE",
      "PRAGMA user_version = 5",
      "PRAGMA temp.journal_mode = OFF",
      'PRAGMA "journal_mode" = OFF',
    ]) {
      const res = await q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect(await engineSettings(q)).toEqual({ journal: "wal", sync: 1 });
  });

  it("refuses durability pragmas hidden behind comments or the call form", async () => {
    const { q } = await seeded();
    const statuses: Record<string, number> = {};
    for (const sql of [
      "PRAGMA/**/synchronous=OFF -- pragma table_info",
      "PRAGMA/**/journal_mode=DELETE /* pragma user_version */",
      "PRAGMA user_version(5)",
      "PRAGMA user_version /* x */ = 6",
    ]) {
      statuses[sql] = (await q(sql)).status;
    }
    expect.soft(statuses).toEqual(Object.fromEntries(Object.keys(statuses).map((k) => [k, 403])));
    expect.soft(await engineSettings(q)).toEqual({ journal: "wal", sync: 1 });
    expect.soft((await q("PRAGMA user_version")).body.rows).toEqual([{ user_version: 0 }]);
  });

  it("does not let SQL load extensions", async () => {
    const { q, batch } = await seeded();
    const res = await q("SELECT load_extension('/nonexistent/libevil.so')");
    // Refused like a PRAGMA or ATTACH the sandbox does not allow: 403 forbidden.
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect(res.body.error.message).toMatch(/not authorized/);
    const inBatch = await batch([{ sql: "SELECT 1" }, { sql: "SELECT load_extension('/nonexistent/libevil.so')" }]);
    expect(inBatch.status).toBe(403);
    expect(inBatch.body.error.code).toBe("forbidden");
  });

  it("runs exactly one statement per /query, refusing a second one", async () => {
    const { q } = await seeded();
    const res = await q("SELECT 1; DROP TABLE t");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect((await q("SELECT v FROM t")).body.rows).toEqual([{ v: "kept" }]);
    // A trailing semicolon or comment is still one statement.
    expect((await q("SELECT v FROM t; -- done")).status).toBe(200);
  });
});

describe("db: statement timeout", () => {
  it("interrupts a runaway statement after 5 s with a clear error and keeps every db usable", async () => {
    const server = await seeded();
    const other = dbOn(server, await createDb(server, "other"));
    await other.q("CREATE TABLE o (x)");
    await other.q("INSERT INTO o VALUES (42)");

    // A request for another db made while the runaway runs is answered before it (another
    // SQL host serves it), and the runaway is interrupted with the spec's error.
    const order: string[] = [];
    const [runaway, queued] = await Promise.all([
      server.q(RUNAWAY).finally(() => order.push("runaway")),
      other.q("INSERT INTO o VALUES (43) RETURNING x").finally(() => order.push("other")),
    ]);
    expect(runaway.status).toBe(400);
    expect(runaway.body.error.code).toBe("invalid_request");
    expect(runaway.body.error.message).toMatch(/5000 ms/);
    expect(runaway.body.error.message).toMatch(/interrupted/);
    expect(queued.status).toBe(200);
    expect(queued.body.rows).toEqual([{ x: 43 }]);
    expect(order).toEqual(["other", "runaway"]);

    // The same db and another db work afterwards, with their data intact.
    expect((await server.q("SELECT v FROM t")).body.rows).toEqual([{ v: "kept" }]);
    expect((await server.q("INSERT INTO t (v) VALUES ('after')")).status).toBe(200);
    expect((await server.q("SELECT count(*) AS c FROM t")).body.rows).toEqual([{ c: 2 }]);
    expect((await other.q("SELECT x FROM o ORDER BY x")).body.rows).toEqual([{ x: 42 }, { x: 43 }]);
    const check = await server.q("PRAGMA integrity_check");
    expect(check.body.rows).toEqual([{ integrity_check: "ok" }]);
  }, 30_000);

  it("rolls back a batch whose last statement runs too long", async () => {
    const { q, batch } = await seeded();
    const res = await batch([{ sql: "INSERT INTO t (v) VALUES ('lost')" }, { sql: "DELETE FROM t" }, { sql: RUNAWAY }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/interrupted/);
    expect((await q("SELECT v FROM t ORDER BY id")).body.rows).toEqual([{ v: "kept" }]);
    expect((await q("PRAGMA integrity_check")).body.rows).toEqual([{ integrity_check: "ok" }]);
  }, 30_000);
});
