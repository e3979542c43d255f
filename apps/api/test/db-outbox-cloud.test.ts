// The db outbox in the cloud (issue 42, item 4): an api cell as a child process (limits on, S3,
// durable) is killed with SIGKILL right after a write with `enqueue` committed and before the
// message reached its queue (the engine's test-only PRIM_TEST_OUTBOX_KILL). Restarted, the
// workspace's engine drains the outbox when it opens: the job is there exactly once, and a rolled
// back batch sent nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiProcess } from "./cell-processes.js";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

let cloud: ProbeCloud;
let ws: ProbeWorkspace;

beforeAll(async () => {
  cloud = await startProbeCloud("db_outbox_cloud", ["cell-a"]);
  ws = await cloud.workspace("outbox", "pro", { on: "cell-a" });
}, 120_000);
afterAll(async () => {
  await cloud?.stop();
});

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ws.key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

describe("the db outbox in a cell", () => {
  it("a SIGKILL between the commit and the queue loses nothing and doubles nothing", async () => {
    const cell = cloud.cell("cell-a");
    let api = cell.url;
    await ok(api, ws.key, "POST", "/v1/groups", { name: "app" });
    const db = (await ok(api, ws.key, "POST", "/v1/primitives", { name: "orders", type: "db", group: "app" })).id;
    const queue = (await ok(api, ws.key, "POST", "/v1/primitives", { name: "jobs", type: "queue", group: "app" })).id;
    await ok(api, ws.key, "POST", `/v1/primitives/${db}/exec`, { sql: "CREATE TABLE orders (item TEXT NOT NULL)" });
    // A rolled-back batch: nothing written, nothing sent.
    const rolled = await call(api, "POST", `/v1/primitives/${db}/batch`, {
      statements: [{ sql: "INSERT INTO orders VALUES ('pen')" }, { sql: "INSERT INTO orders VALUES (NULL)" }],
      enqueue: [{ primitive: "jobs", queue: "work", body: "pen" }],
    });
    expect(rolled.status).toBe(409);
    // One committed write with its message, then the cell dies before delivering it.
    await cell.process.kill("SIGKILL");
    const dying = await startApiProcess({ ...cell.env, PRIM_TEST_OUTBOX_KILL: "before-deliver" }, 90_000);
    const killed = await fetch(`${dying.url}/v1/primitives/${db}/exec`, {
      method: "POST",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        sql: "INSERT INTO orders VALUES ('book')",
        enqueue: [{ primitive: "jobs", queue: "work", body: { order: "book" } }],
      }),
    }).catch((error: unknown) => error);
    expect(killed).toBeInstanceOf(Error); // the connection died with the process
    await dying.kill("SIGKILL"); // already gone: waits for its exit
    const restarted = await startApiProcess(cell.env, 90_000);
    cell.process = restarted;
    api = restarted.url;
    const rows = await ok(api, ws.key, "POST", `/v1/primitives/${db}/query`, { sql: "SELECT item FROM orders" });
    expect(rows.rows).toEqual([{ item: "book" }]);
    let jobs: { body: unknown }[] = [];
    for (let i = 0; i < 100 && jobs.length === 0; i++) {
      jobs = (await ok(api, ws.key, "GET", `/v1/primitives/${queue}/queues/work/messages?status=ready`)).data;
      if (jobs.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(jobs.map((j) => j.body)).toEqual([{ order: "book" }]);
    // Another write with its message: delivered at once, still no duplicate of the first.
    await ok(api, ws.key, "POST", `/v1/primitives/${db}/exec`, {
      sql: "INSERT INTO orders VALUES ('lamp')",
      enqueue: [{ primitive: queue, queue: "work", body: { order: "lamp" } }],
    });
    jobs = (await ok(api, ws.key, "GET", `/v1/primitives/${queue}/queues/work/messages?status=ready`)).data;
    expect(jobs.map((j) => j.body)).toEqual([{ order: "book" }, { order: "lamp" }]);
  }, 180_000);
});
