// Limits, metering and plan caps against the machine's Redis and Postgres (issue 19): the
// limiter's clock is moved by the test (the script takes it instead of Redis's TIME).
import { createKey, createWorkspace, setPlan } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limitKeys } from "../src/index.js";

let now = Date.UTC(2026, 10, 30, 23, 59, 0); // 2026-11-30 23:59 UTC
let cloud: TestCloud;
const redis = new Redis("redis://127.0.0.1:6379");

beforeAll(async () => {
  cloud = await startCloud(
    "limits",
    { PRIM_LIMITS: "on", PRIM_CLIENT_IP_HEADER: "x-forwarded-for" },
    // A loaded machine may keep Redis past the 50 ms outage threshold: outages are limits-outage.test.ts's.
    { limits: { now: () => now, timeoutMs: 2000 } },
  );
});
afterAll(async () => {
  await cloud.stop();
  redis.disconnect();
});

/** A workspace with group `app` and kv `cache`, made with a fresh bucket (the clock moved on). */
async function workspace(plan: "starter" | "pro" = "starter") {
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan });
  const key = ws.key;
  await call(cloud.url, key, "POST", "/v1/groups", { name: "app" });
  const kv = (await call(cloud.url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body;
  now += 10_000; // the two creates' tokens come back
  return { id: ws.workspace.id, key, kv: kv.id as string };
}

/** The counts this api process holds, sent to Redis (`reread`: and the month figures read back). */
const flush = (reread = false) => cloud.api.limiter?.flush(reread);

const get = (key: string, kv: string) => call(cloud.url, key, "GET", `/v1/primitives/${kv}/keys/a`);

describe("rate limit: 20/s, bursts of 60, per credential", () => {
  it("admits a burst of 60, then answers 429 rate_limited with Retry-After; tokens come back at 20/s", async () => {
    const w = await workspace();
    for (let i = 0; i < 60; i++) {
      const res = await get(w.key, w.kv);
      expect(res.status).toBe(404); // the key is missing: the call was admitted
      expect(res.headers.get("ratelimit-policy")).toBe('"default";q=60;w=3');
      expect(res.headers.get("ratelimit")).toBe(`"default";r=${59 - i};t=${Math.ceil((i + 1) / 20)}`);
    }
    const refused = await get(w.key, w.kv);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(refused.headers.get("retry-after")).toBe("1");
    now += 50; // one token at 20/s
    expect((await get(w.key, w.kv)).status).toBe(404);
    expect((await get(w.key, w.kv)).status).toBe(429);
    now += 3000; // full again
    for (let i = 0; i < 60; i++) expect((await get(w.key, w.kv)).status).toBe(404);
    expect((await get(w.key, w.kv)).status).toBe(429);
  });

  it("limits two keys of one workspace separately, and Enterprise keys at their own rate", async () => {
    const w = await workspace();
    const second = await createKey(cloud.api.hub.pool, { workspace: w.id });
    for (let i = 0; i < 60; i++) await get(w.key, w.kv);
    expect((await get(w.key, w.kv)).status).toBe(429);
    expect((await get(second.key, w.kv)).status).toBe(404);
    await setPlan(cloud.api.hub.pool, { workspace: w.id, plan: "enterprise", rps: 5, burst: 10 }, (ws) =>
      cloud.api.revocations.planChanged(ws),
    );
    now += 60_000;
    for (let i = 0; i < 10; i++) expect((await get(second.key, w.kv)).status).toBe(404);
    const refused = await get(second.key, w.kv);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit-policy")).toBe('"default";q=10;w=2');
  });
});

describe("Starter caps and features", () => {
  it("answers 403 plan_limit to a second group, snapshot, restore, fork, group export and import, and audit reads; Pro has them", async () => {
    const w = await workspace();
    const refused = [
      await call(cloud.url, w.key, "POST", "/v1/groups", { name: "second" }),
      await call(cloud.url, w.key, "POST", `/v1/primitives/${w.kv}/snapshots`, {}),
      await call(cloud.url, w.key, "POST", `/v1/primitives/${w.kv}/restore`, { snapshot: "x" }),
      await call(cloud.url, w.key, "POST", `/v1/primitives/${w.kv}/fork`, {}),
      await call(cloud.url, w.key, "GET", "/v1/audit"),
      await call(cloud.url, w.key, "GET", "/v1/groups/app/export"),
      await call(cloud.url, w.key, "POST", `/v1/groups/app/import?sha256=${"0".repeat(64)}`, {}),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("plan_limit");
    }
    const pro = await workspace("pro");
    expect((await call(cloud.url, pro.key, "POST", "/v1/groups", { name: "second" })).status).toBe(201);
    expect((await call(cloud.url, pro.key, "POST", `/v1/primitives/${pro.kv}/snapshots`, {})).status).toBe(201);
    expect((await call(cloud.url, pro.key, "GET", "/v1/audit")).status).toBe(200);
  });

  it("answers 429 plan_limit after 1M operations this month; uncounted routes still work; the 1st (UTC) resets it", async () => {
    now = Date.UTC(2026, 10, 30, 23, 0, 0); // 2026-11-30 23:00 UTC
    const w = await workspace();
    const month = "202611";
    await redis.set(limitKeys(w.id).ops + month, 999_999);
    await flush(true); // the process reads the figure set from outside
    expect((await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/a`, { value: 1 })).status).toBe(200);
    const capped = await get(w.key, w.kv);
    expect(capped.status).toBe(429);
    expect(capped.body.error.code).toBe("plan_limit");
    expect((await call(cloud.url, w.key, "GET", "/v1/primitives")).status).toBe(200); // not counted
    await flush();
    expect(await redis.get(limitKeys(w.id).ops + month)).toBe("1000000"); // the refusal took nothing
    now = Date.UTC(2026, 11, 1, 0, 0, 1); // 2026-12-01 00:00:01 UTC: a new month
    const reset = await get(w.key, w.kv);
    expect(reset.body).toMatchObject({ value: 1 });
    await flush();
    expect(await redis.get(`${limitKeys(w.id).ops}202612`)).toBe("1");
  });

  it("counts each entry of a queue batch as one operation; a batch that would pass the cap is refused whole", async () => {
    now = Date.UTC(2026, 10, 15, 12, 0, 0);
    const w = await workspace();
    const queue = (await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "q", type: "queue", group: "app" }))
      .body.id as string;
    now += 10_000;
    const ops = limitKeys(w.id).ops;
    await flush();
    const before = Number(await redis.get(`${ops}202611`));
    const batch = (n: number) =>
      call(cloud.url, w.key, "POST", `/v1/primitives/${queue}/queues/jobs/messages/batch`, {
        messages: Array.from({ length: n }, (_, i) => ({ body: i })),
      });
    const sent = await batch(10);
    expect([sent.status, sent.body.error]).toEqual([200, undefined]);
    await flush();
    expect(await redis.get(`${ops}202611`)).toBe(String(before + 10));
    expect(await redis.get(`${ops}20261115`)).toBe(String(before + 10));
    // One request took one token of the rate limit, whatever its entries.
    expect(sent.headers.get("ratelimit")).toMatch(/^"default";r=(58|59);/);

    await redis.set(`${ops}202611`, 1_000_000 - 5);
    await flush(true);
    const over = await batch(6);
    expect([over.status, over.body.error?.code]).toEqual([429, "plan_limit"]);
    expect(await redis.get(`${ops}202611`)).toBe(String(1_000_000 - 5)); // the refusal took nothing
    expect(
      (await call(cloud.url, w.key, "GET", `/v1/primitives/${queue}/queues/jobs/messages`)).body.data,
    ).toHaveLength(10);
    // The listing above counted one: four entries remain, and a batch of four fits exactly.
    const upTo = await batch(4);
    expect([upTo.status, upTo.body.error]).toEqual([200, undefined]);
    await flush();
    expect(await redis.get(`${ops}202611`)).toBe("1000000");
    expect((await batch(1)).status).toBe(429);
  });

  it("a plan change applies to the very next request", async () => {
    const w = await workspace();
    expect((await call(cloud.url, w.key, "POST", `/v1/primitives/${w.kv}/snapshots`, {})).status).toBe(403);
    // As billing and `prim admin` change it: Redis's copy deleted, every process told.
    await setPlan(cloud.api.hub.pool, { workspace: w.id, plan: "pro" }, (ws) => cloud.api.revocations.planChanged(ws));
    expect((await call(cloud.url, w.key, "POST", `/v1/primitives/${w.kv}/snapshots`, {})).status).toBe(201);
  });

  it("at 5 GB refuses writes (signed uploads too) with 429 plan_limit; reads and deletes work", async () => {
    const w = await workspace();
    const store = (
      await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "files", type: "storage", group: "app" })
    ).body.id as string;
    await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/a`, { value: 1 });
    const upload = (
      await call(cloud.url, w.key, "POST", `/v1/primitives/${store}/presign`, { key: "f", method: "PUT" })
    ).body.url as string;
    await redis.set(limitKeys(w.id).storage, 5 * 1024 ** 3);
    const write = await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/b`, { value: 2 });
    expect(write.status).toBe(429);
    expect(write.body.error.code).toBe("plan_limit");
    const signed = await fetch(upload, { method: "PUT", body: "x" });
    expect(signed.status).toBe(429);
    expect((await get(w.key, w.kv)).status).toBe(200);
    expect((await call(cloud.url, w.key, "DELETE", `/v1/primitives/${w.kv}/keys/a`)).status).toBe(200);
    expect(
      (await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "more", type: "kv", group: "app" })).status,
    ).toBe(429);
    await redis.set(limitKeys(w.id).storage, 0);
    expect((await fetch(upload, { method: "PUT", body: "x" })).status).toBe(200);
  });

  it("at 5 GB refuses writing SQL through /query as through /exec (a key with db_exec); reads still answer", async () => {
    const w = await workspace();
    const db = (await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "main", type: "db", group: "app" })).body
      .id as string;
    const query = (sql: string) => call(cloud.url, w.key, "POST", `/v1/primitives/${db}/query`, { sql });
    // Below the cap the workspace key writes through /query (the rightful caller).
    expect((await query("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")).status).toBe(200);
    expect((await query("INSERT INTO t (v) VALUES ('kept')")).status).toBe(200);

    await redis.set(limitKeys(w.id).storage, 5 * 1024 ** 3);
    for (const sql of [
      "INSERT INTO t (v) SELECT hex(randomblob(1000)) FROM t",
      "WITH r(n) AS (SELECT 1) INSERT INTO t (v) SELECT 'x' FROM r",
      "CREATE TABLE more (a)",
    ]) {
      const refused = await query(sql);
      expect([refused.status, refused.body.error?.code], sql).toEqual([429, "plan_limit"]);
    }
    expect((await query("SELECT v FROM t")).body.rows).toEqual([{ v: "kept" }]);
    expect((await query("WITH r AS (SELECT count(*) AS n FROM t) SELECT n FROM r")).body.rows).toEqual([{ n: 1 }]);
    expect((await query("DELETE FROM t")).status).toBe(429); // a DELETE is told from its text as a write
    await redis.set(limitKeys(w.id).storage, 0);
    expect((await query("DELETE FROM t")).status).toBe(200);
  });

  it("at 5 GB refuses queue batches (send and publish) like single sends; receiving and deleting still work", async () => {
    const w = await workspace();
    const queue = (await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "q", type: "queue", group: "app" }))
      .body.id as string;
    const base = `/v1/primitives/${queue}`;
    const messages = { messages: [{ body: 1 }, { body: 2 }] };
    const sendBatch = () => call(cloud.url, w.key, "POST", `${base}/queues/jobs/messages/batch`, messages);
    const publishBatch = () => call(cloud.url, w.key, "POST", `${base}/topics/news/publish/batch`, messages);
    // Below the cap both batches write (the rightful caller).
    expect((await call(cloud.url, w.key, "POST", `${base}/topics/news/subscriptions`, { queue: "jobs" })).status).toBe(
      201,
    );
    expect((await sendBatch()).status).toBe(200);
    expect((await publishBatch()).status).toBe(200);

    await redis.set(limitKeys(w.id).storage, 5 * 1024 ** 3);
    for (const refused of [await sendBatch(), await publishBatch()]) {
      expect([refused.status, refused.body.error?.code]).toEqual([429, "plan_limit"]);
    }
    const listed = await call(cloud.url, w.key, "GET", `${base}/queues/jobs/messages`);
    expect([listed.status, listed.body.data.length]).toEqual([200, 4]);
    const purged = await call(cloud.url, w.key, "POST", `${base}/queues/jobs/purge`, { status: "done" });
    expect([purged.status, purged.body]).toEqual([200, { purged: 0 }]);
    expect((await call(cloud.url, w.key, "DELETE", `${base}/topics/news/subscriptions/jobs`)).status).toBe(204);
    await redis.set(limitKeys(w.id).storage, 0);
  });

  it("answers 429 plan_limit to the 101st primitive", async () => {
    const w = await workspace();
    for (let i = 1; i < 100; i++) {
      const res = await call(cloud.url, w.key, "POST", "/v1/primitives", { name: `p${i}`, type: "kv", group: "app" });
      expect(res.status).toBe(201);
      now += 1000;
    }
    const refused = await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "p100", type: "kv", group: "app" });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("plan_limit");
  });
});

describe("signed URLs", () => {
  it("are limited per client IP (the trusted proxy header's last entry), not per key", async () => {
    const w = await workspace("pro");
    const store = (
      await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "files", type: "storage", group: "app" })
    ).body.id as string;
    await fetch(`${cloud.url}/v1/primitives/${store}/objects/f`, {
      method: "PUT",
      headers: { authorization: `Bearer ${w.key}` },
      body: "hello",
    });
    const url = (await call(cloud.url, w.key, "POST", `/v1/primitives/${store}/presign`, { key: "f" })).body
      .url as string;
    now += 10_000;
    const from = (ip: string) => fetch(url, { headers: { "x-forwarded-for": `203.0.113.9, ${ip}` } });
    for (let i = 0; i < 60; i++) expect((await from("198.51.100.1")).status).toBe(200);
    expect((await from("198.51.100.1")).status).toBe(429);
    expect((await from("198.51.100.2")).status).toBe(200);
    expect((await get(w.key, w.kv)).status).toBe(404); // the key's own bucket is untouched
  });
});

describe("metering", () => {
  it("rolls the day's operations and storage up into usage_daily", async () => {
    const w = await workspace("pro");
    for (let i = 0; i < 5; i++) await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/k${i}`, { value: i });
    await cloud.api.metering?.measureStorage();
    await cloud.api.metering?.rollUp();
    const { rows } = await cloud.api.hub.pool.query(
      "SELECT to_char(day, 'YYYY-MM-DD') AS day, operations, storage_bytes FROM usage_daily WHERE workspace_id = $1",
      [w.id],
    );
    expect(rows).toEqual([
      { day: new Date(now).toISOString().slice(0, 10), operations: "5", storage_bytes: expect.any(String) },
    ]);
    expect(Number(rows[0].storage_bytes)).toBeGreaterThan(0);
  });

  it("closes the day at the first roll-up after midnight: calls after the day's last roll-up count", async () => {
    now = Date.UTC(2026, 11, 14, 23, 58, 0); // 2026-12-14 23:58 UTC
    const w = await workspace("pro");
    await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/a`, { value: 1 });
    await cloud.api.metering?.rollUp(); // 23:58:10: one write so far
    now += 60_000;
    for (let i = 0; i < 3; i++) await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/b${i}`, { value: i });
    now = Date.UTC(2026, 11, 15, 0, 0, 30); // the next roll-up is after midnight
    await call(cloud.url, w.key, "GET", `/v1/primitives/${w.kv}/keys/a`);
    await cloud.api.metering?.rollUp();
    const { rows } = await cloud.api.hub.pool.query(
      "SELECT to_char(day, 'YYYY-MM-DD') AS day, operations FROM usage_daily WHERE workspace_id = $1 ORDER BY day",
      [w.id],
    );
    expect(rows).toEqual([
      { day: "2026-12-14", operations: "4" },
      { day: "2026-12-15", operations: "1" },
    ]);
  });

  it("counts operations per primitive in this process (no Redis command beyond the leases and the batched counts) and adds them to usage_primitive_daily", async () => {
    now = Date.UTC(2026, 11, 20, 12, 0, 0);
    const w = await workspace("pro");
    const other = (
      await call(cloud.url, w.key, "POST", "/v1/primitives", { name: "jobs", type: "queue", group: "app" })
    ).body.id as string;
    await cloud.api.metering?.rollUp(); // what came before (the creates count nowhere)
    // Every command the limiter's Redis client sends while the calls run.
    const client = (cloud.api.limiter as unknown as { redis: { sendCommand(cmd: { name: string }): unknown } }).redis;
    const sent: string[] = [];
    const original = client.sendCommand.bind(client);
    client.sendCommand = (cmd) => {
      sent.push(cmd.name);
      return original(cmd);
    };
    try {
      for (let i = 0; i < 4; i++)
        await call(cloud.url, w.key, "PUT", `/v1/primitives/${w.kv}/keys/k${i}`, { value: i });
      // A batch counts each entry, per primitive too; a missing primitive counts for none.
      const batch = { messages: [{ body: { n: 1 } }, { body: { n: 2 } }, { body: { n: 3 } }] };
      expect(
        (await call(cloud.url, w.key, "POST", `/v1/primitives/${other}/queues/q/messages/batch`, batch)).status,
      ).toBe(200);
      expect((await call(cloud.url, w.key, "GET", "/v1/primitives/01jzzzzzzzzzzzzzzzzzzzzzzz/keys/a")).status).toBe(
        404,
      );
    } finally {
      client.sendCommand = original;
    }
    // Six calls, fewer lease scripts (each lease takes the calls of the last 100 ms, and is
    // topped up before it runs out); the counts go in batches (MULTI … EXEC of INCRBY and
    // EXPIRE), however many the flush timer made meanwhile.
    expect(sent.filter((name) => name === "evalsha").length).toBeLessThan(6);
    const batched = new Set(["evalsha", "multi", "incrby", "expire", "exec"]);
    expect(sent.filter((name) => !batched.has(name))).toEqual([]);
    await cloud.api.metering?.rollUp();
    const rows = async () =>
      (
        await cloud.api.hub.pool.query(
          "SELECT to_char(day, 'YYYY-MM-DD') AS day, primitive_id, operations FROM usage_primitive_daily WHERE workspace_id = $1 ORDER BY operations DESC",
          [w.id],
        )
      ).rows;
    expect(await rows()).toEqual([
      { day: "2026-12-20", primitive_id: w.kv, operations: "4" },
      { day: "2026-12-20", primitive_id: other, operations: "3" },
    ]);
    // The next roll-up adds only what came since.
    await call(cloud.url, w.key, "GET", `/v1/primitives/${other}/stats`);
    await cloud.api.metering?.rollUp();
    expect((await rows()).find((r) => r.primitive_id === other)?.operations).toBe("4");
    const { rows: day } = await cloud.api.hub.pool.query(
      "SELECT operations FROM usage_daily WHERE workspace_id = $1 AND day = '2026-12-20'",
      [w.id],
    );
    expect(day).toEqual([{ operations: "9" }]); // the 404 counts in the month, not for a primitive
  });
});
