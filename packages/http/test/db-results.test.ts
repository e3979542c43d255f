import { describe, expect, it } from "vitest";
import { createDb, dbOn, withDb } from "./db-helpers.js";

const T = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE, n INTEGER DEFAULT 0)";

describe("db: last_insert_rowid edge cases", () => {
  it("reports the rowid of a new row even when it equals the previous insert's rowid", async () => {
    const { q } = await withDb();
    await q(T);
    expect((await q("INSERT INTO t (v) VALUES ('a')")).body).toMatchObject({ rows_affected: 1, last_insert_rowid: 1 });
    await q("DELETE FROM t");
    // SQLite hands out rowid 1 again: a row was inserted, so its rowid is reported.
    const again = await q("INSERT INTO t (v) VALUES ('b')");
    expect(again.body).toMatchObject({ rows_affected: 1, last_insert_rowid: 1 });
    expect((await q("SELECT id, v FROM t")).body.rows).toEqual([{ id: 1, v: "b" }]);
  });

  it("reports the rowid each time the same row is REPLACEd", async () => {
    const { q } = await withDb();
    await q(T);
    expect((await q("REPLACE INTO t (id, v) VALUES (7, 'x')")).body.last_insert_rowid).toBe(7);
    expect((await q("REPLACE INTO t (id, v) VALUES (7, 'y')")).body.last_insert_rowid).toBe(7);
    expect((await q("SELECT id, v FROM t")).body.rows).toEqual([{ id: 7, v: "y" }]);
  });

  it("reports an explicit rowid equal to the previous one after the row was deleted", async () => {
    const { q, batch } = await withDb();
    await q(T);
    const res = await batch([
      { sql: "INSERT INTO t (id, v) VALUES (5, 'a')" },
      { sql: "DELETE FROM t WHERE id = 5" },
      { sql: "INSERT INTO t (id, v) VALUES (5, 'b')" },
    ]);
    expect(res.body.results.map((r: { last_insert_rowid: unknown }) => r.last_insert_rowid)).toEqual([5, null, 5]);
  });

  it("returns last_insert_rowid beyond 2^53 as a string, like other big integers", async () => {
    const { q } = await withDb();
    await q(T);
    const res = await q("INSERT INTO t (id, v) VALUES (9007199254740993, 'big')");
    expect(res.body).toMatchObject({ rows_affected: 1, last_insert_rowid: "9007199254740993" });
    const next = await q("INSERT INTO t (id, v) VALUES (9007199254740995, 'bigger')");
    expect(next.body.last_insert_rowid).toBe("9007199254740995");
    expect((await q("SELECT id FROM t ORDER BY id")).body.rows).toEqual([
      { id: "9007199254740993" },
      { id: "9007199254740995" },
    ]);
  });

  it("reports null for an upsert that updated instead of inserting", async () => {
    const { q } = await withDb();
    await q(T);
    await q("INSERT INTO t (v) VALUES ('a')");
    await q("INSERT INTO t (v) VALUES ('b')");
    const res = await q("INSERT INTO t (v) VALUES ('a') ON CONFLICT (v) DO UPDATE SET n = n + 1");
    expect(res.body).toMatchObject({ rows_affected: 1, last_insert_rowid: null });
    expect((await q("SELECT v, n FROM t ORDER BY id")).body.rows).toEqual([
      { v: "a", n: 1 },
      { v: "b", n: 0 },
    ]);
  });
});

describe("db: repeated statements", () => {
  it("reflects schema changes in columns and rows when the same SELECT runs again", async () => {
    const { q } = await withDb();
    await q(T);
    await q("INSERT INTO t (v) VALUES ('a')");
    const before = await q("SELECT * FROM t");
    expect(before.body.columns).toEqual(["id", "v", "n"]);
    await q("ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'e'");
    const after = await q("SELECT * FROM t");
    expect(after.body.columns).toEqual(["id", "v", "n", "extra"]);
    expect(after.body.rows).toEqual([{ id: 1, v: "a", n: 0, extra: "e" }]);
    await q("ALTER TABLE t DROP COLUMN n");
    const dropped = await q("SELECT * FROM t");
    expect(dropped.body.columns).toEqual(["id", "v", "extra"]);
    expect(dropped.body.rows).toEqual([{ id: 1, v: "a", extra: "e" }]);
  });

  it("gives each run its own parameters and a fresh, complete result", async () => {
    const { q, batch } = await withDb();
    await q(T);
    await q("INSERT INTO t (v) VALUES ('a'), ('b'), ('c')");
    const sql = "SELECT v FROM t WHERE id >= ? ORDER BY id";
    expect((await q(sql, [2])).body.rows).toEqual([{ v: "b" }, { v: "c" }]);
    expect((await q(sql, [1])).body.rows).toEqual([{ v: "a" }, { v: "b" }, { v: "c" }]);
    expect((await q(sql, [3])).body.rows).toEqual([{ v: "c" }]);
    const res = await batch([
      { sql, params: [3] },
      { sql, params: [2] },
    ]);
    expect(res.body.results.map((r: { rows: unknown[] }) => r.rows.length)).toEqual([1, 2]);
  });

  it("runs the same SQL on main and on a branch against their own data", async () => {
    const { q, api, base } = await withDb();
    await q(T);
    await q("INSERT INTO t (v) VALUES ('main')");
    await api("POST", `${base}/branches`, { name: "b" });
    await q("INSERT INTO t (v) VALUES ('branch')", undefined, "b");
    const sql = "SELECT v FROM t ORDER BY id";
    expect((await q(sql)).body.rows).toEqual([{ v: "main" }]);
    expect((await q(sql, undefined, "b")).body.rows).toEqual([{ v: "main" }, { v: "branch" }]);
    await api("POST", `${base}/branches/b/promote`, {});
    expect((await q(sql)).body.rows).toEqual([{ v: "main" }, { v: "branch" }]);
  });

  it("answers many concurrent queries on two dbs, each with its own result", async () => {
    const server = await withDb();
    const other = dbOn(server, await createDb(server, "other"));
    await server.q(T);
    await other.q(T);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? server : other).q("INSERT INTO t (v) VALUES (?) RETURNING v", [`v${i}`]),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(results.map((r) => r.body.rows[0].v)).toEqual(Array.from({ length: 40 }, (_, i) => `v${i}`));
    expect((await server.q("SELECT count(*) AS c FROM t")).body.rows).toEqual([{ c: 20 }]);
    expect((await other.q("SELECT v FROM t WHERE v = 'v1'")).body.rows).toEqual([{ v: "v1" }]);
  });
});
