// db_exec's `enqueue` (engine README, "db outbox"): jobs sent into a queue of the session's group
// with the write, only if it commits; the call is narrowed to db_exec and queue_send, so a
// session or key without queue_send cannot enqueue.
import { expect, it } from "vitest";
import { forEachInvoker, ok, startMcpServer } from "./helpers.js";

forEachInvoker("MCP tools: db_exec enqueue", () => {
  it("sends with a write that commits, nothing with one that rolls back, and needs queue_send", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    await ok(s, client, "primitive_create", { name: "store", type: "db" });
    await ok(s, client, "primitive_create", { name: "jobs", type: "queue" });
    await ok(s, client, "db_exec", { primitive: "store", sql: "CREATE TABLE t (v TEXT UNIQUE)" });
    const job = { primitive: "jobs", queue: "work", body: { hello: 1 } };
    const jobs = async () =>
      (await ok(s, client, "queue_receive", { primitive: "jobs", action: "list", queue: "work" })).data.map(
        (j: { body: unknown }) => j.body,
      );

    // A session narrowed to db_exec may write but not enqueue: refused before anything runs.
    const narrow = await s.connect("g", "?tools=db_exec");
    const refused = await s.call(narrow, "db_exec", {
      primitive: "store",
      sql: "INSERT INTO t VALUES ('a')",
      enqueue: [job],
    });
    expect(refused).toMatchObject({ isError: true, data: { error: { code: "tool_not_allowed" } } });
    expect(refused.data.error.message).toContain("queue_send");
    expect(await jobs()).toEqual([]);

    const both = await s.connect("g", "?tools=db_exec,queue_send");
    const single = await ok(s, both, "db_exec", {
      primitive: "store",
      sql: "INSERT INTO t VALUES ('a')",
      enqueue: [job],
    });
    expect(single).toMatchObject({ rows_affected: 1 });
    const batch = await ok(s, both, "db_exec", {
      primitive: "store",
      statements: [{ sql: "INSERT INTO t VALUES ('b')" }],
      enqueue: [{ ...job, body: { hello: 2 } }],
    });
    expect(batch.results).toHaveLength(1);
    expect(await jobs()).toEqual([{ hello: 1 }, { hello: 2 }]);

    const rolledBack = await s.call(both, "db_exec", {
      primitive: "store",
      statements: [{ sql: "INSERT INTO t VALUES ('c')" }, { sql: "INSERT INTO t VALUES ('a')" }],
      enqueue: [{ ...job, body: { hello: 3 } }],
    });
    expect(rolledBack).toMatchObject({ isError: true, data: { error: { code: "conflict" } } });
    expect(await jobs()).toEqual([{ hello: 1 }, { hello: 2 }]);
    const rows = await ok(s, client, "db_query", { primitive: "store", sql: "SELECT v FROM t ORDER BY v" });
    expect(rows.rows).toEqual([{ v: "a" }, { v: "b" }]);
  });
});
