// Hostile input to the db routes must fail on its own: nothing queued behind it, on this db or
// any other, may be delayed, misattributed or lost.
import { LOCAL_PRINCIPAL } from "@prim/engine";
import { describe, expect, it } from "vitest";
import { createDb, dbOn, withDb } from "./db-helpers.js";

/** `select ?` with one parameter nested `depth` arrays deep, as raw JSON text. */
const nestedBody = (depth: number) => `{"sql":"select ?","params":[${"[".repeat(depth)}1${"]".repeat(depth)}]}`;

describe("db: parameters nested too deep", () => {
  it("answers 400 invalid_request, and every db keeps answering writes, tables, branches and export", async () => {
    const server = await withDb();
    const other = dbOn(server, await createDb(server, "other"));
    await other.q("CREATE TABLE t (v TEXT)");

    const res = await server.api("POST", `${server.base}/query`, nestedBody(6000));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    // The engine's own check, whatever the HTTP edge does with deep JSON.
    const deep = JSON.parse(nestedBody(100_000)) as { sql: string; params: unknown[] };
    await expect(server.engine.invoke(LOCAL_PRINCIPAL, "db.query", server.db.id, deep)).rejects.toMatchObject({
      code: "invalid_request",
    });

    expect((await other.q("INSERT INTO t VALUES ('after')")).status).toBe(200);
    expect((await other.q("SELECT v FROM t")).body.rows).toEqual([{ v: "after" }]);
    const tables = await server.api("GET", `${other.base}/tables`);
    expect(tables.status).toBe(200);
    expect(tables.body.data).toEqual([{ name: "t", type: "table" }]);
    expect((await server.api("POST", `${other.base}/branches`, { name: "trial" })).status).toBe(201);
    expect((await server.api("GET", `${other.base}/branches`)).body.data.map((b: { name: string }) => b.name)).toEqual([
      "trial",
    ]);
    const exported = await server.api("GET", `${other.base}/export`);
    expect(exported.status).toBe(200);
    expect(exported.text.startsWith("SQLite format 3")).toBe(true);
    // And the db that received the bad request.
    expect((await server.q("SELECT 1 AS one")).body.rows).toEqual([{ one: 1 }]);
  });
});

describe("db: statements that build large strings", () => {
  it("answers a key built with || from its parameters (run by the SQL host, not the engine's thread)", async () => {
    // The engine's direct point-read path refuses `||` (unit tests: db-direct-reads), so this
    // runs in the host under its 5 s limit; here, that the answer is still right.
    const server = await withDb();
    await server.q("CREATE TABLE t (id TEXT PRIMARY KEY)");
    const a = "x".repeat(1024);
    await server.q("INSERT INTO t VALUES (?)", [a.repeat(120)]);
    const sql = `SELECT length(id) AS n FROM t WHERE id = (${Array(120).fill(":a").join("||")})`;
    const res = await server.q(sql, { a });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([{ n: 120 * 1024 }]);
    const big = await server.q("SELECT id FROM t WHERE id = ?", ["y".repeat(1024 * 1024)]);
    expect(big.status).toBe(200);
    expect(big.body.rows).toEqual([]);
  });
});
