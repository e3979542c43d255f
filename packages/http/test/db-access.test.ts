import { describe, expect, it } from "vitest";
import { withDb, withScopedDb } from "./db-helpers.js";

async function seededScoped() {
  const server = await withScopedDb();
  await server.q("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  await server.q("INSERT INTO t (v) VALUES ('seed')");
  return server;
}

describe("db: tool allowlist", () => {
  it("lets a db_query key read but answers 403 forbidden to every kind of write", async () => {
    const { as, key, q, call, base } = await seededScoped();
    as(["db_query"]);
    expect((await key.q("SELECT v FROM t")).body.rows).toEqual([{ v: "seed" }]);
    expect((await key.q("PRAGMA table_info(t)")).status).toBe(200);
    expect((await call("GET", `${base}/tables`)).status).toBe(200);
    expect((await call("GET", `${base}/tables/t`)).status).toBe(200);
    for (const sql of [
      "INSERT INTO t (v) VALUES ('x')",
      "INSERT INTO t (v) VALUES ('x') RETURNING id",
      "WITH n(v) AS (VALUES ('x')) INSERT INTO t (v) SELECT v FROM n",
      "UPDATE t SET v = 'changed'",
      "DELETE FROM t",
      "CREATE TABLE u (x)",
      "CREATE TEMP TABLE tmp (x)",
      "DROP TABLE t",
      "PRAGMA user_version = 3",
    ]) {
      const res = await key.q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code, sql).toBe("forbidden");
    }
    expect((await q("SELECT v FROM t")).body.rows).toEqual([{ v: "seed" }]);
    expect((await call("GET", `${base}/tables`)).body.data).toEqual([{ name: "t", type: "table" }]);
  });

  it("answers 403 forbidden to a db_query key's batch with a write, writing nothing", async () => {
    const { as, key, q } = await seededScoped();
    as(["db_query"]);
    expect((await key.batch([{ sql: "SELECT 1 AS one" }, { sql: "SELECT 2 AS two" }])).status).toBe(200);
    const res = await key.batch([{ sql: "SELECT 1" }, { sql: "INSERT INTO t (v) VALUES ('x')" }]);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect(res.body.error.message).toContain("statements[1]");
    expect((await q("SELECT count(*) AS c FROM t")).body.rows).toEqual([{ c: 1 }]);
  });

  it("does not let a db_query key change engine settings through a pragma hidden by a comment", async () => {
    const { as, key, q } = await seededScoped();
    as(["db_query"]);
    const res = await key.q("PRAGMA/**/synchronous=OFF -- pragma table_info");
    expect(res.status).toBe(403);
    expect((await q("SELECT synchronous FROM pragma_synchronous")).body.rows).toEqual([{ synchronous: 1 }]);
  });

  it("lets a db_exec key write and read", async () => {
    const { as, key, q } = await seededScoped();
    as(["db_exec"]);
    const ins = await key.q("INSERT INTO t (v) VALUES (?)", ["by-exec"]);
    expect(ins.status).toBe(200);
    expect(ins.body).toMatchObject({ rows_affected: 1, last_insert_rowid: 2 });
    expect((await key.batch([{ sql: "UPDATE t SET v = 'b' WHERE id = 2" }])).status).toBe(200);
    expect((await key.q("SELECT v FROM t ORDER BY id")).body.rows).toEqual([{ v: "seed" }, { v: "b" }]);
    expect((await q("SELECT count(*) AS c FROM t")).body.rows).toEqual([{ c: 2 }]);
  });

  it("answers 403 tool_not_allowed to a key with only kv tools", async () => {
    const { as, key, call, base } = await seededScoped();
    as(["kv_*"]);
    for (const res of [
      await key.q("SELECT 1"),
      await key.batch([{ sql: "SELECT 1" }]),
      await call("GET", `${base}/tables`),
      await call("GET", `${base}/tables/t`),
      await call("GET", `${base}/branches`),
      await call("GET", `${base}/export`),
      await call("GET", `${base}/stats`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("tool_not_allowed");
    }
  });

  it("requires db_branch for the branch routes and only for them", async () => {
    const { as, call, key, base } = await seededScoped();
    as(["db_query", "db_exec"]);
    for (const [method, path, body] of [
      ["POST", `${base}/branches`, { name: "b" }],
      ["GET", `${base}/branches`, undefined],
      ["POST", `${base}/branches/b/promote`, {}],
      ["DELETE", `${base}/branches/b`, undefined],
    ] as const) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("tool_not_allowed");
    }
    as(["db_branch"]);
    expect((await call("POST", `${base}/branches`, { name: "b" })).status).toBe(201);
    expect((await call("GET", `${base}/branches`)).body.data).toHaveLength(1);
    expect((await key.q("SELECT 1")).body.error.code).toBe("tool_not_allowed");
    expect((await call("POST", `${base}/branches/b/promote`, {})).status).toBe(200);
    expect((await call("POST", `${base}/branches`, { name: "c" })).status).toBe(201);
    expect((await call("DELETE", `${base}/branches/c`)).status).toBe(200);
  });

  it("keeps a db_query key read-only on a branch too", async () => {
    const { as, key, api, base } = await seededScoped();
    await api("POST", `${base}/branches`, { name: "b" });
    as(["db_query"]);
    expect((await key.q("SELECT v FROM t", undefined, "b")).body.rows).toEqual([{ v: "seed" }]);
    expect((await key.q("DELETE FROM t", undefined, "b")).status).toBe(403);
    as(["db_exec"]);
    expect((await key.q("DELETE FROM t", undefined, "b")).status).toBe(200);
  });

  it("requires db_query (not db_exec) for export and stats", async () => {
    const { as, call, base } = await seededScoped();
    as(["db_exec"]);
    const exportDenied = await call("GET", `${base}/export`);
    expect(exportDenied.status).toBe(403);
    expect(exportDenied.body.error.code).toBe("tool_not_allowed");
    expect((await call("GET", `${base}/stats`)).body.error.code).toBe("tool_not_allowed");
    as(["db_query"]);
    const exported = await call("GET", `${base}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect((await call("GET", `${base}/stats`)).body.items).toBe(1);
  });

  it("answers 404 not_found to a key of another group", async () => {
    const { api, as, key } = await seededScoped();
    const other = (await api("POST", "/v1/groups", { name: "other" })).body;
    as(null, other.id);
    const res = await key.q("SELECT v FROM t");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("db: pause", () => {
  it("answers 423 paused on every data route while paused, and works again after resume", async () => {
    const { api, base, q, batch, engine, db } = await withDb();
    await q("CREATE TABLE t (x)");
    await q("INSERT INTO t VALUES (1)");
    await api("POST", `${base}/branches`, { name: "b" });
    await engine.services.catalog.updatePrimitive(db.id, { paused: true });
    for (const res of [
      await q("SELECT * FROM t"),
      await api("POST", `${base}/exec`, { sql: "INSERT INTO t VALUES (2)" }),
      await batch([{ sql: "SELECT 1" }]),
      await api("GET", `${base}/tables`),
      await api("GET", `${base}/tables/t`),
      await api("POST", `${base}/branches`, { name: "c" }),
      await api("GET", `${base}/branches`),
      await api("POST", `${base}/branches/b/promote`, {}),
      await api("DELETE", `${base}/branches/b`),
      await api("GET", `${base}/export`),
    ]) {
      expect(res.status).toBe(423);
      expect(res.body.error.code).toBe("paused");
    }
    // Info and stats still work while paused.
    expect((await api("GET", base)).body.paused).toBe(true);
    expect((await api("GET", `${base}/stats`)).body).toMatchObject({ items: 1, paused: true });
    await engine.services.catalog.updatePrimitive(db.id, { paused: false });
    expect((await q("SELECT x FROM t")).body.rows).toEqual([{ x: 1 }]);
    expect((await api("GET", `${base}/branches`)).body.data).toHaveLength(1);
  });
});
