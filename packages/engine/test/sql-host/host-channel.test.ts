// The SQL host channel pairs replies with requests by order: a request that cannot be sent must
// fail on its own and leave every later request (of any db) answered correctly.
import { existsSync } from "node:fs";
import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/wire";
import { afterEach, describe, expect, it } from "vitest";
import { SqlHost } from "../../src/sql-host/pool.js";
import { tempDir, testEngine } from "../helpers.js";

const hosts: SqlHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

/** `[[[…1…]]]`, `depth` arrays deep: JSON.stringify overflows the stack on it. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("db host channel: requests that cannot be serialised", () => {
  it("SqlHost rejects them with 400 invalid_request and keeps answering later requests in order", async () => {
    const host = new SqlHost();
    hosts.push(host);
    const dir = tempDir();
    const at = { file: `${dir}/a.sqlite`, dir: `${dir}/a.d` };
    const exec = (sql: string, params?: unknown) =>
      host.request<{ rows: unknown[] }>({
        kind: "exec",
        at,
        statements: [{ sql, params }],
        batch: false,
        readOnly: false,
      });
    await exec("CREATE TABLE t (v)");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    // Sent in one turn with good requests around them: the bad ones must not take a slot.
    const results = await Promise.allSettled([
      exec("INSERT INTO t VALUES (1)"),
      exec("SELECT ?", [nested(100_000)]),
      exec("INSERT INTO t VALUES (2)"),
      exec("SELECT ?", [10n]),
      exec("SELECT ?", cyclic),
      exec("SELECT v FROM t ORDER BY v"),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    // Whether JSON.stringify reaches the bottom of 100,000 nested arrays (1) depends on the stack
    // V8 has left (a worker that ran other files first gets further): then the host's own
    // parameter check refuses it. Either way a 400, and the channel keeps its order.
    for (const i of [1, 3, 4]) {
      const reason = (results[i] as PromiseRejectedResult).reason;
      expect(reason.code, String(i)).toBe("invalid_request");
      expect(reason.message).toMatch(i === 1 ? /cannot be sent to the SQL host|parameters must be/ : /cannot be sent/);
    }
    const last = (results[5] as PromiseFulfilledResult<{ rows: unknown[] }>).value;
    expect(JSON.parse(JSON.stringify(last)).rows).toEqual([{ v: 1 }, { v: 2 }]);
    expect(host.load).toBe(0);
  });

  it("through engine.invoke: 400 invalid_request, and writes, tables, branches and export of another db still work", async () => {
    const { engine } = testEngine();
    const local = LOCAL_PRINCIPAL;
    await engine.invoke(local, "group.create", null, { name: "app" });
    const create = (name: string) =>
      engine.invoke<PrimitiveInfo>(local, "primitive.create", null, { name, type: "db", group: "app" });
    const a = await create("a");
    const b = await create("b");
    const query = (db: PrimitiveInfo, sql: string, params?: unknown) =>
      engine.invoke<{ rows: unknown[] }>(local, "db.query", db.id, { sql, params });
    await query(b, "CREATE TABLE t (v)");

    await expect(query(a, "select ?", [nested(6000)])).rejects.toMatchObject({ code: "invalid_request" });
    await expect(query(a, "select ?", [nested(100_000)])).rejects.toMatchObject({ code: "invalid_request" });

    await query(b, "INSERT INTO t VALUES ('after')");
    expect((await query(b, "SELECT v FROM t")).rows).toEqual([{ v: "after" }]);
    expect(await engine.invoke(local, "db.tables", b.id, {})).toEqual({ data: [{ name: "t", type: "table" }] });
    await engine.invoke(local, "db.branch.create", b.id, { name: "trial" });
    expect(
      ((await engine.invoke(local, "db.branch.list", b.id, {})) as { data: { name: string }[] }).data.map(
        (x) => x.name,
      ),
    ).toEqual(["trial"]);
    const exported = await engine.invoke<{ download: { path: string } }>(local, "primitive.export", b.id, {});
    expect(existsSync(exported.download.path)).toBe(true);
    expect((await query(a, "SELECT 7 AS x")).rows).toEqual([{ x: 7 }]);
    // Closing stops the hosts (it used to wait forever on a reply that never came).
    await engine.close();
  });

  it("answers a request before a runaway pipelined behind it starts (its reply is never held back)", async () => {
    const host = new SqlHost({ size: 1, timeoutMs: 1500 });
    hosts.push(host);
    const dir = tempDir();
    const at = { file: `${dir}/a.sqlite`, dir: `${dir}/a.d` };
    const exec = (sql: string) =>
      host.request({ kind: "exec", at, statements: [{ sql }], batch: false, readOnly: false });
    await exec("CREATE TABLE t (v)");
    // Sent in one write: the host reads both at once, runs the insert, then the runaway.
    const [write, runaway] = await Promise.allSettled([
      exec("INSERT INTO t VALUES (1)"),
      exec("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"),
    ]);
    expect(write.status).toBe("fulfilled"); // it was committed: reporting it interrupted would be wrong
    expect((runaway as PromiseRejectedResult).reason.code).toBe("invalid_request");
    const rows = JSON.parse(JSON.stringify(await exec("SELECT count(*) AS n FROM t"))).rows;
    expect(rows).toEqual([{ n: 1 }]);
  }, 20_000);
});
