// The db outbox (engine README, "db outbox"): `enqueue` on /query, /exec and /batch sends into
// queue primitives of the db's group if and only if the write commits, exactly once.
import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { describe, expect, it } from "vitest";
import { type DbServer, withScopedDb } from "./db-helpers.js";

async function setup() {
  const server = await withScopedDb();
  await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "other" });
  const make = (name: string, type: string, group = "app") =>
    server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, { name, type, group });
  await server.q("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL UNIQUE)");
  const queue = await make("jobs", "queue");
  return { ...server, make, queue };
}

/** Every job of queue `name` in queue primitive `id`. */
async function jobsOf(server: DbServer, id: string, name = "work"): Promise<any[]> {
  const res = await server.api("GET", `/v1/primitives/${id}/queues/${name}/messages?limit=200`);
  expect(res.status).toBe(200);
  return res.body.data;
}

const count = async (server: DbServer) => (await server.q("SELECT count(*) AS n FROM orders")).body.rows[0].n;

describe("db outbox: enqueue with a write", () => {
  it("sends each message once, after the write committed, by queue name or id", async () => {
    const server = await setup();
    const { base, queue } = server;
    const res = await server.api("POST", `${base}/query`, {
      sql: "INSERT INTO orders (item) VALUES (?)",
      params: ["book"],
      enqueue: [
        { primitive: "jobs", queue: "work", body: { order: "book" }, priority: 5 },
        { primitive: queue.id, queue: "mail", body: "receipt", dedupe_key: "receipt-book", max_attempts: 2 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows_affected: 1, last_insert_rowid: 1 });
    const work = await jobsOf(server, queue.id);
    expect(work).toHaveLength(1);
    expect(work[0]).toMatchObject({ body: { order: "book" }, status: "ready", priority: 5, attempts: 0 });
    const mail = await jobsOf(server, queue.id, "mail");
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ body: "receipt", dedupe_key: "receipt-book", max_attempts: 2 });
    // The outbox is emptied and never shown among the tables.
    expect((await server.q("SELECT count(*) AS n FROM _prim_outbox")).body.rows).toEqual([{ n: 0 }]);
    expect((await server.api("GET", `${base}/tables`)).body.data.map((t: { name: string }) => t.name)).toEqual([
      "orders",
    ]);
    // The queue's feed shows the sends; the db call's audit entry counts the messages.
    const feed = await server.api("GET", `/v1/primitives/${queue.id}/changes`);
    expect(feed.body.data.filter((e: { op: string }) => e.op === "send")).toHaveLength(2);
    const audit = await server.api("GET", `${base}/audit?action=db.query`);
    expect(audit.body.data.map((e: { detail: unknown }) => e.detail)).toContainEqual({ enqueued: 2 });
  });

  it("sends from /exec and /batch, and a delay runs from the commit", async () => {
    const server = await setup();
    const { base, queue } = server;
    const exec = await server.api("POST", `${base}/exec`, {
      sql: "INSERT INTO orders (item) VALUES ('pen')",
      enqueue: [{ primitive: "jobs", queue: "work", body: 1, delay: "1m" }],
    });
    expect(exec.status).toBe(200);
    const batch = await server.api("POST", `${base}/batch`, {
      statements: [{ sql: "INSERT INTO orders (item) VALUES ('ink')" }, { sql: "SELECT count(*) AS n FROM orders" }],
      enqueue: [{ primitive: "jobs", queue: "work", body: 2 }],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results[1].rows).toEqual([{ n: 2 }]);
    const jobs = await jobsOf(server, queue.id);
    expect(jobs.map((j) => j.body)).toEqual([1, 2]);
    expect(jobs[0].available_at - jobs[0].created_at).toBe(60_000);
    // A message whose dedupe_key matches a pending job joins it, as a send would.
    await server.api("POST", `${base}/exec`, {
      sql: "UPDATE orders SET item = item",
      enqueue: [{ primitive: "jobs", queue: "work", body: 3, dedupe_key: "k" }],
    });
    await server.api("POST", `${base}/exec`, {
      sql: "UPDATE orders SET item = item",
      enqueue: [{ primitive: "jobs", queue: "work", body: 4, dedupe_key: "k" }],
    });
    expect((await jobsOf(server, queue.id)).map((j) => j.body)).toEqual([1, 2, 3]);
  });

  it("sends nothing when the batch rolls back, and sends once the same batch commits", async () => {
    const server = await setup();
    const { base, queue } = server;
    await server.q("INSERT INTO orders (item) VALUES ('taken')");
    const failing = await server.api("POST", `${base}/batch`, {
      statements: [
        { sql: "INSERT INTO orders (item) VALUES ('new')" },
        { sql: "INSERT INTO orders (item) VALUES ('taken')" },
      ],
      enqueue: [{ primitive: "jobs", queue: "work", body: "new order" }],
    });
    expect(failing.status).toBe(409);
    expect(failing.body.error.code).toBe("conflict");
    expect(await count(server)).toBe(1);
    expect(await jobsOf(server, queue.id)).toEqual([]);
    const single = await server.api("POST", `${base}/query`, {
      sql: "INSERT INTO orders (item) VALUES ('taken')",
      enqueue: [{ primitive: "jobs", queue: "work", body: "dup" }],
    });
    expect(single.status).toBe(409);
    expect(await jobsOf(server, queue.id)).toEqual([]);
    // The outbox's table is made by the first message that commits: none did.
    expect((await server.q("SELECT count(*) AS n FROM _prim_outbox")).body.error.message).toContain("no such table");
    const ok = await server.api("POST", `${base}/batch`, {
      statements: [{ sql: "INSERT INTO orders (item) VALUES ('new')" }],
      enqueue: [{ primitive: "jobs", queue: "work", body: "new order" }],
    });
    expect(ok.status).toBe(200);
    expect((await jobsOf(server, queue.id)).map((j) => j.body)).toEqual(["new order"]);
  });

  it("refuses bad messages before anything runs: 404, wrong_type, 413, 400, a branch, a paused queue", async () => {
    const server = await setup();
    const { base, make } = server;
    const kv = await make("cache", "kv");
    const other = await make("elsewhere", "queue", "other");
    const send = (entry: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      server.api("POST", `${base}/query`, {
        sql: "INSERT INTO orders (item) VALUES ('x')",
        enqueue: [{ primitive: "jobs", queue: "work", body: 1, ...entry }],
        ...extra,
      });
    const cases: [Record<string, unknown>, Record<string, unknown>, number, string, string][] = [
      [{ primitive: "nope" }, {}, 404, "not_found", "enqueue[0].primitive"],
      [{ primitive: other.id }, {}, 404, "not_found", "enqueue[0].primitive"],
      [{ primitive: "elsewhere" }, {}, 404, "not_found", "enqueue[0].primitive"],
      [{ primitive: kv.id }, {}, 400, "wrong_type", "is a kv"],
      [{ body: "x".repeat(300 * 1024) }, {}, 413, "payload_too_large", "enqueue[0].body"],
      [{ queue: "Bad Name" }, {}, 400, "invalid_request", "enqueue[0].queue"],
      [{ delay: "2000d" }, {}, 400, "invalid_request", "enqueue[0].delay"],
      [{ extra: true }, {}, 400, "invalid_request", "extra"],
      [{}, { branch: "b" }, 400, "invalid_request", "branch"],
    ];
    for (const [entry, extra, status, code, says] of cases) {
      const res = await send(entry, extra);
      expect(res.status, JSON.stringify(entry)).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(says);
    }
    expect((await server.api("POST", `${base}/query`, { sql: "SELECT 1", enqueue: [] })).body.error.code).toBe(
      "invalid_request",
    );
    await server.api("POST", `/v1/primitives/${server.queue.id}/pause`);
    expect((await send({})).status).toBe(423);
    await server.api("POST", `/v1/primitives/${server.queue.id}/resume`);
    expect(await count(server)).toBe(0);
    expect(await jobsOf(server, server.queue.id)).toEqual([]);
    // The rightful call on the same fresh objects succeeds.
    expect((await send({})).status).toBe(200);
    expect(await jobsOf(server, server.queue.id)).toHaveLength(1);
    expect(await jobsOf(server, other.id)).toEqual([]);
  });

  it("refuses a write through the outbox to users' SQL: the table is the engine's", async () => {
    const server = await setup();
    await server.api("POST", `${server.base}/query`, {
      sql: "SELECT 1",
      enqueue: [{ primitive: "jobs", queue: "work", body: 1 }],
    });
    for (const sql of [
      "INSERT INTO _prim_outbox (id) VALUES ('x')",
      "DELETE FROM _prim_outbox",
      "DROP TABLE _prim_outbox",
      'UPDATE "_PRIM_OUTBOX" SET body = 2',
      "CREATE TRIGGER t AFTER INSERT ON orders BEGIN DELETE FROM _prim_outbox; END",
    ]) {
      const res = await server.q(sql);
      expect(res.status, sql).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });
});

describe("db outbox: who may enqueue", () => {
  const entry = { primitive: "jobs", queue: "work", body: "hello" };

  it("needs db_exec and queue_send; a read-only credential never enqueues", async () => {
    const server = await setup();
    const { as, call, base, queue } = server;
    const write = (path = "query") =>
      call("POST", `${base}/${path}`, { sql: "INSERT INTO orders (item) VALUES ('k')", enqueue: [entry] });
    as(["db_exec"]);
    let res = await write();
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("tool_not_allowed");
    expect(res.body.error.message).toContain("queue_send");
    as(["db_query", "queue_send"]);
    res = await call("POST", `${base}/query`, { sql: "SELECT 1", enqueue: [entry] });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    res = await call("POST", `${base}/batch`, { statements: [{ sql: "SELECT 1" }], enqueue: [entry] });
    expect(res.body.error.code).toBe("forbidden");
    as(["queue_send"]);
    expect((await write("exec")).body.error.code).toBe("tool_not_allowed");
    expect(await count(server)).toBe(0);
    expect(await jobsOf(server, queue.id)).toEqual([]);
    as(["db_exec", "queue_send"]);
    expect((await write()).status).toBe(200);
    expect((await write("exec")).status).toBe(409); // UNIQUE item: rolled back, nothing sent
    expect(await count(server)).toBe(1);
    expect(await jobsOf(server, queue.id)).toHaveLength(1);
    as(["db_*", "queue_*"]);
    res = await call("POST", `${base}/batch`, {
      statements: [{ sql: "INSERT INTO orders (item) VALUES ('glob')" }],
      enqueue: [entry],
    });
    expect(res.status).toBe(200);
    expect(await jobsOf(server, queue.id)).toHaveLength(2);
  });

  it("refuses a read-only credential before anything runs, and lets the same key without the flag", async () => {
    const server = await setup();
    const body = { sql: "SELECT 1", enqueue: [entry] };
    const readOnly = { kind: "scoped" as const, workspace: "local", actor: "key:ro", groupId: null, tools: null };
    const db = server.db.id;
    await expect(server.engine.invoke({ ...readOnly, readOnly: true }, "db.exec", db, body)).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(server.engine.invoke({ ...readOnly, readOnly: true }, "db.query", db, body)).rejects.toMatchObject({
      code: "forbidden",
    });
    expect(await jobsOf(server, server.queue.id)).toEqual([]);
    await server.engine.invoke(readOnly, "db.exec", db, body);
    expect(await jobsOf(server, server.queue.id)).toHaveLength(1);
  });

  it("keeps a key to its group: another group's queue is 404, its own group's is sent to", async () => {
    const server = await setup();
    const { as, call, base, make } = server;
    const other = await make("elsewhere", "queue", "other");
    as(["db_exec", "queue_send"]);
    const res = await call("POST", `${base}/query`, {
      sql: "INSERT INTO orders (item) VALUES ('x')",
      enqueue: [{ ...entry, primitive: other.id }],
    });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect(await jobsOf(server, other.id)).toEqual([]);
    expect(await count(server)).toBe(0);
    const ok = await call("POST", `${base}/query`, {
      sql: "INSERT INTO orders (item) VALUES ('x')",
      enqueue: [{ ...entry, primitive: server.queue.id }],
    });
    expect(ok.status).toBe(200);
    expect(await jobsOf(server, server.queue.id)).toHaveLength(1);
  });
});
