import { withKv } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { createDb, dbOn, RESULT_KEYS, withDb } from "./db-helpers.js";

const USERS = "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, age INTEGER)";

describe("db: POST /query result", () => {
  it("returns exactly the five result keys for reads and writes", async () => {
    const { q } = await withDb();
    const create = await q(USERS);
    expect(create.status).toBe(200);
    expect(create.body).toEqual({ columns: [], rows: [], rows_affected: 0, last_insert_rowid: null, truncated: false });
    await q("INSERT INTO users (name, age) VALUES ('ada', 36)");
    const select = await q("SELECT id, name, age FROM users");
    expect(Object.keys(select.body).sort()).toEqual(RESULT_KEYS);
    expect(select.body).toEqual({
      columns: ["id", "name", "age"],
      rows: [{ id: 1, name: "ada", age: 36 }],
      rows_affected: 0,
      last_insert_rowid: null,
      truncated: false,
    });
  });

  it("reports rows_affected and last_insert_rowid for INSERT, UPDATE and DELETE", async () => {
    const { q } = await withDb();
    await q(USERS);
    const one = await q("INSERT INTO users (name) VALUES ('a')");
    expect(one.body).toMatchObject({ rows_affected: 1, last_insert_rowid: 1, columns: [], rows: [] });
    const two = await q("INSERT INTO users (name) VALUES ('b'), ('c')");
    expect(two.body).toMatchObject({ rows_affected: 2, last_insert_rowid: 3 });
    const update = await q("UPDATE users SET age = 1 WHERE id >= 2");
    expect(update.body).toMatchObject({ rows_affected: 2, last_insert_rowid: null });
    const del = await q("DELETE FROM users WHERE id = 1");
    expect(del.body).toMatchObject({ rows_affected: 1, last_insert_rowid: null });
    const none = await q("DELETE FROM users WHERE id = 99");
    expect(none.body).toMatchObject({ rows_affected: 0, last_insert_rowid: null });
    const ignored = await q("INSERT OR IGNORE INTO users (name) VALUES ('b')");
    expect(ignored.body).toMatchObject({ rows_affected: 0, last_insert_rowid: null });
    const replaced = await q("REPLACE INTO users (id, name) VALUES (10, 'z')");
    expect(replaced.body).toMatchObject({ rows_affected: 1, last_insert_rowid: 10 });
  });

  it("returns RETURNING rows together with the write counts", async () => {
    const { q } = await withDb();
    await q(USERS);
    const res = await q("INSERT INTO users (name) VALUES ('a'), ('b') RETURNING id, name");
    expect(res.body).toEqual({
      columns: ["id", "name"],
      rows: [
        { id: 1, name: "a" },
        { id: 2, name: "b" },
      ],
      rows_affected: 2,
      last_insert_rowid: 2,
      truncated: false,
    });
  });

  it("reports last_insert_rowid for an INSERT that starts with a WITH clause", async () => {
    const { q } = await withDb();
    await q(USERS);
    const res = await q("WITH n(v) AS (VALUES ('a'), ('b')) INSERT INTO users (name) SELECT v FROM n");
    expect(res.body).toMatchObject({ rows_affected: 2, last_insert_rowid: 2 });
  });

  it("serves /exec as an alias of /query", async () => {
    const { api, base, q } = await withDb();
    await q(USERS);
    const res = await api("POST", `${base}/exec`, { sql: "INSERT INTO users (name) VALUES (?)", params: ["x"] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows_affected: 1, last_insert_rowid: 1 });
    expect((await q("SELECT name FROM users")).body.rows).toEqual([{ name: "x" }]);
    // Under its own operation name, so the audit trail says which door the write came through.
    const actions = (await api("GET", "/v1/audit")).body.data.map((e: { action: string }) => e.action);
    expect(actions.filter((a: string) => a === "db.exec")).toHaveLength(1);
  });
});

describe("db: parameters and values", () => {
  it("binds positional and named parameters (:n, @n, $n keys bind n)", async () => {
    const { q } = await withDb();
    await q(USERS);
    await q("INSERT INTO users (name, age) VALUES (?, ?)", ["pos", 1]);
    await q("INSERT INTO users (name, age) VALUES (:name, @age)", { name: "named", age: 2 });
    await q("INSERT INTO users (name, age) VALUES (:name, $age)", { ":name": "prefixed", $age: 3 });
    await q("INSERT INTO users (name, age) VALUES (@name, @age)", { "@name": "at", "@age": 4 });
    const rows = (await q("SELECT name, age FROM users WHERE age > ? ORDER BY age", [0])).body.rows;
    expect(rows).toEqual([
      { name: "pos", age: 1 },
      { name: "named", age: 2 },
      { name: "prefixed", age: 3 },
      { name: "at", age: 4 },
    ]);
  });

  it("binds booleans as 0/1 and null as NULL", async () => {
    const { q } = await withDb();
    const res = await q("SELECT ? AS t, ? AS f, ? AS n, typeof(?) AS nt", [true, false, null, null]);
    expect(res.body.rows).toEqual([{ t: 1, f: 0, n: null, nt: "null" }]);
  });

  it("round-trips BLOBs through { base64 } params and base64 results", async () => {
    const { q } = await withDb();
    await q("CREATE TABLE files (id INTEGER PRIMARY KEY, data BLOB)");
    const bytes = Buffer.from([0, 1, 2, 250, 255, 0, 10]);
    await q("INSERT INTO files (data) VALUES (?)", [{ base64: bytes.toString("base64") }]);
    const res = await q("SELECT data, typeof(data) AS kind, length(data) AS len FROM files");
    expect(res.body.rows).toEqual([{ data: bytes.toString("base64"), kind: "blob", len: 7 }]);
    expect(Buffer.from(res.body.rows[0].data, "base64")).toEqual(bytes);
    const lit = await q("SELECT x'DEADBEEF' AS b");
    expect(lit.body.rows[0].b).toBe(Buffer.from("deadbeef", "hex").toString("base64"));
  });

  it("returns integers beyond 2^53 as strings and others as numbers", async () => {
    const { q } = await withDb();
    const res = await q(
      "SELECT 9007199254740991 AS max_safe, 9007199254740993 AS big, -9223372036854775808 AS min, 1.5 AS real",
    );
    expect(res.body.rows).toEqual([
      { max_safe: 9007199254740991, big: "9007199254740993", min: "-9223372036854775808", real: 1.5 },
    ]);
  });

  it.each([
    ["a nested object", [{ a: 1 }]],
    ["a nested array", [[1, 2]]],
    ["an object that is not { base64 }", { v: { base64: 5 } }],
    ["a string instead of array or object", "abc"],
    ["a number instead of array or object", 5],
  ])("answers 400 invalid_request for params that are %s", async (_label, params) => {
    const { q } = await withDb();
    const res = await q("SELECT :v AS v", params);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  it("answers 400 for the wrong number of parameters or a missing named one", async () => {
    const { q } = await withDb();
    const tooFew = await q("SELECT ? AS a, ? AS b", [1]);
    expect(tooFew.status).toBe(400);
    expect(tooFew.body.error.code).toBe("invalid_request");
    const tooMany = await q("SELECT ? AS a", [1, 2]);
    expect(tooMany.status).toBe(400);
    const missing = await q("SELECT :a AS a", { b: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("invalid_request");
  });
});

describe("db: errors", () => {
  it("answers 400 invalid_request with SQLite's message for invalid SQL", async () => {
    const { q } = await withDb();
    const syntax = await q("SELEC 1");
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.code).toBe("invalid_request");
    expect(syntax.body.error.message).toContain('near "SELEC": syntax error');
    const missing = await q("SELECT * FROM nowhere");
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("no such table: nowhere");
  });

  it("answers 400 for an empty body, empty sql or unknown fields", async () => {
    const { api, base } = await withDb();
    expect((await api("POST", `${base}/query`, {})).status).toBe(400);
    expect((await api("POST", `${base}/query`, { sql: "" })).status).toBe(400);
    expect((await api("POST", `${base}/query`, { sql: "   " })).status).toBe(400);
    const extra = await api("POST", `${base}/query`, { sql: "SELECT 1", nope: true });
    expect(extra.status).toBe(400);
    expect(extra.body.error.code).toBe("invalid_request");
  });

  it("answers 409 conflict for constraint violations and keeps the data", async () => {
    const { q } = await withDb();
    await q(USERS);
    await q("INSERT INTO users (name) VALUES ('a')");
    for (const sql of [
      "INSERT INTO users (name) VALUES ('a')",
      "INSERT INTO users (id, name) VALUES (1, 'b')",
      "INSERT INTO users (name) VALUES (NULL)",
    ]) {
      const res = await q(sql);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("conflict");
      expect(res.body.error.message).toMatch(/constraint/i);
    }
    expect((await q("SELECT id, name FROM users")).body.rows).toEqual([{ id: 1, name: "a" }]);
  });

  it("answers 400 wrong_type naming the type when /query hits a kv primitive", async () => {
    const { api, base } = await withKv();
    const res = await api("POST", `${base}/query`, { sql: "SELECT 1" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("wrong_type");
    expect(res.body.error.message).toContain("kv");
  });
});

describe("db: result caps", () => {
  it("returns at most 10,000 rows and sets truncated when cut", async () => {
    const { q } = await withDb();
    await q("CREATE TABLE n (x INTEGER)");
    const fill = await q(
      "INSERT INTO n (x) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10050) SELECT x FROM c",
    );
    expect(fill.body.rows_affected).toBe(10050);
    const all = await q("SELECT x FROM n ORDER BY x");
    expect(all.status).toBe(200);
    expect(all.body.truncated).toBe(true);
    expect(all.body.rows).toHaveLength(10000);
    expect(all.body.rows[9999]).toEqual({ x: 10000 });
    const exact = await q("SELECT x FROM n LIMIT 10000");
    expect(exact.body.truncated).toBe(false);
    expect(exact.body.rows).toHaveLength(10000);
    expect((await q("SELECT count(*) AS c FROM n")).body.rows).toEqual([{ c: 10050 }]);
  });

  it("stops near 10 MiB of row data and sets truncated", async () => {
    const { q } = await withDb();
    // 20 rows of 1 MiB text each: far more than 10 MiB in total.
    const res = await q(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20) SELECT x, hex(zeroblob(524288)) AS s FROM c",
    );
    expect(res.status).toBe(200);
    expect(res.body.truncated).toBe(true);
    expect(res.body.rows.length).toBeGreaterThanOrEqual(9);
    expect(res.body.rows.length).toBeLessThanOrEqual(11);
    const total = res.body.rows.reduce((n: number, r: { s: string }) => n + r.s.length, 0);
    expect(total).toBeLessThanOrEqual(11 * 1024 * 1024);
  });
  it("measures the 10 MiB cap in bytes, not characters, for multi-byte text", async () => {
    const { q } = await withDb();
    // 20 rows of 349,526 three-byte characters: about 1 MiB of UTF-8 each, 20 MiB in total.
    const res = await q(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20) SELECT replace(hex(zeroblob(174763)), '0', '€') AS s FROM c",
    );
    expect(res.status).toBe(200);
    const bytes = res.body.rows.reduce((n: number, r: { s: string }) => n + Buffer.byteLength(r.s), 0);
    expect(res.body.truncated).toBe(true);
    expect(bytes).toBeLessThanOrEqual(11 * 1024 * 1024);
  });
});

describe("db: batch", () => {
  it("shares one 10 MiB row budget across a batch, and still runs every statement", async () => {
    const { batch, q } = await withDb();
    // Five statements of 8 × 1 MiB each: 40 MiB if each had its own cap.
    const eight =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 8) SELECT x, hex(zeroblob(524288)) AS s FROM c";
    const res = await batch([
      { sql: eight },
      { sql: eight },
      { sql: "CREATE TABLE after_budget (id INTEGER PRIMARY KEY)" },
      { sql: eight },
      { sql: eight },
    ]);
    expect(res.status).toBe(200);
    const results = res.body.results as { rows: { s: string }[]; truncated: boolean }[];
    expect(results.map((r) => r.truncated)).toEqual([false, true, false, true, true]);
    expect(results[0]?.rows).toHaveLength(8);
    expect(results[3]?.rows).toEqual([]);
    const total = results.reduce((n, r) => n + r.rows.reduce((m, row) => m + (row.s?.length ?? 0), 0), 0);
    expect(total).toBeLessThanOrEqual(11 * 1024 * 1024);
    // The write after the budget was spent ran with the rest of the transaction.
    expect((await q("SELECT count(*) AS n FROM after_budget")).body.rows).toEqual([{ n: 0 }]);
  });

  it("runs statements in one transaction and returns one result per statement", async () => {
    const { batch, q } = await withDb();
    const res = await batch([
      { sql: USERS },
      { sql: "INSERT INTO users (name) VALUES (?)", params: ["a"] },
      { sql: "INSERT INTO users (name) VALUES (:n)", params: { n: "b" } },
      { sql: "SELECT name FROM users ORDER BY id" },
    ]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["results"]);
    expect(res.body.results).toHaveLength(4);
    for (const r of res.body.results) expect(Object.keys(r).sort()).toEqual(RESULT_KEYS);
    expect(res.body.results[1]).toMatchObject({ rows_affected: 1, last_insert_rowid: 1 });
    expect(res.body.results[2]).toMatchObject({ rows_affected: 1, last_insert_rowid: 2 });
    expect(res.body.results[3].rows).toEqual([{ name: "a" }, { name: "b" }]);
    expect((await q("SELECT count(*) AS c FROM users")).body.rows).toEqual([{ c: 2 }]);
  });

  it("rolls back every statement when the third fails, naming statements[2]", async () => {
    const { batch, q } = await withDb();
    await q(USERS);
    await q("INSERT INTO users (name) VALUES ('before')");
    const res = await batch([
      { sql: "INSERT INTO users (name) VALUES ('one')" },
      { sql: "UPDATE users SET age = 99" },
      { sql: "INSERT INTO users (name) VALUES ('before')" },
    ]);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    expect(res.body.error.message).toContain("statements[2]");
    expect((await q("SELECT name, age FROM users")).body.rows).toEqual([{ name: "before", age: null }]);
  });

  it("rolls back and names the index when a later statement is invalid SQL", async () => {
    const { batch, q } = await withDb();
    await q(USERS);
    const res = await batch([{ sql: "INSERT INTO users (name) VALUES ('x')" }, { sql: "SELEC oops" }]);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.message).toContain("statements[1]");
    expect((await q("SELECT count(*) AS c FROM users")).body.rows).toEqual([{ c: 0 }]);
  });

  it("answers 400 for an empty statements list", async () => {
    const { batch } = await withDb();
    const res = await batch([]);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });
});

describe("db: tables and stats", () => {
  it("lists tables and views, and describes a table's columns and SQL", async () => {
    const { api, base, q } = await withDb();
    await q("CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT 'untitled', price REAL)");
    await q("CREATE VIEW cheap AS SELECT * FROM items WHERE price < 1");
    await q("CREATE INDEX items_title ON items (title)");
    const list = await api("GET", `${base}/tables`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      data: [
        { name: "cheap", type: "view" },
        { name: "items", type: "table" },
      ],
    });
    const detail = await api("GET", `${base}/tables/items`);
    expect(detail.status).toBe(200);
    expect(detail.body.sql).toContain("CREATE TABLE items");
    expect(detail.body.columns).toEqual([
      { name: "id", type: "INTEGER", notnull: false, default: null, pk: 1 },
      { name: "title", type: "TEXT", notnull: true, default: "'untitled'", pk: 0 },
      { name: "price", type: "REAL", notnull: false, default: null, pk: 0 },
    ]);
    const missing = await api("GET", `${base}/tables/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
  });

  it("counts tables (not views) as stats items", async () => {
    const { api, base, q } = await withDb();
    expect((await api("GET", `${base}/stats`)).body).toMatchObject({ type: "db", items: 0 });
    await q("CREATE TABLE a (x)");
    await q("CREATE TABLE b (x)");
    await q("CREATE VIEW v AS SELECT * FROM a");
    expect((await api("GET", `${base}/stats`)).body.items).toBe(2);
  });

  it("lists user tables whose names merely start with 'sqlite' and counts them", async () => {
    const { api, base, q } = await withDb();
    await q("CREATE TABLE sqlitestats (x)");
    await q("CREATE TABLE seq (id INTEGER PRIMARY KEY AUTOINCREMENT)");
    await q("INSERT INTO seq DEFAULT VALUES");
    // sqlite_sequence (internal) stays hidden; sqlitestats is the user's own table.
    expect((await api("GET", `${base}/tables`)).body.data).toEqual([
      { name: "seq", type: "table" },
      { name: "sqlitestats", type: "table" },
    ]);
    expect((await api("GET", `${base}/stats`)).body.items).toBe(2);
  });

  it("keeps each db primitive's data separate", async () => {
    const server = await withDb();
    const other = dbOn(server, await createDb(server, "other"));
    await server.q("CREATE TABLE t (x)");
    expect((await other.q("SELECT * FROM t")).status).toBe(400);
    expect((await other.api("GET", `${other.base}/tables`)).body.data).toEqual([]);
  });
});
