// Token leases and batched counts (issue 43, item 1) against the machine's Redis and Postgres:
// the bounds docs/cloud.md states. The clock is the test's (the scripts take it instead of
// Redis's TIME), so no bucket refills while a burst runs and every figure is exact.
//
// Over REST every request of a workspace is admitted by the cell it is placed on (the others
// forward it whole), so the concurrent HTTP burst enters through two apps and one limiter
// decides; the bounds across processes are checked with two limiters on the same Redis and
// Postgres, each holding its own leases and counts as two api processes do.
import { createKey, createWorkspace, STARTER_CAPS } from "@prim/db";
import { type LimitCall, OPERATIONS, ServiceError } from "@prim/engine";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limitKeys, RedisLimiter } from "../src/index.js";
import { UNFLUSHED_CAP } from "../src/limits/counts.js";
import { leaseCap } from "../src/limits/leases.js";

let now = Date.UTC(2026, 10, 16, 12, 0, 0);
let cloud: TestCloud;
let second: string;
const redis = new Redis("redis://127.0.0.1:6379");
const month = "202611";

beforeAll(async () => {
  const limits = { now: () => now, timeoutMs: 2000 };
  cloud = await startCloud("limit_leases", { PRIM_LIMITS: "on" }, { limits });
  second = (await cloud.second()).url;
});
afterAll(async () => {
  await cloud?.stop();
  redis.disconnect();
});

const kvGet = OPERATIONS.find((op) => op.name === "kv.get");
if (kvGet === undefined) throw new Error("no kv.get");

/** What an admit ended in: `ok`, or the refusal's code (with its Retry-After for a 429). */
async function outcome(limiter: RedisLimiter, call: LimitCall): Promise<string> {
  try {
    await limiter.admit(call);
    return "ok";
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    const retry = err.headers["Retry-After"];
    return `${err.status} ${err.code}${retry === undefined ? "" : ` retry ${retry}`}`;
  }
}

const tally = (answers: string[]) => {
  const counts: Record<string, number> = {};
  for (const a of answers) counts[a] = (counts[a] ?? 0) + 1;
  return counts;
};

describe("over REST: 200 concurrent callers of one key", () => {
  it("admit at most the burst plus a lease per process; the rest get 429 rate_limited with Retry-After; every admitted call is counted", async () => {
    const burst = 40;
    const made = await createWorkspace(cloud.api.hub.pool, { name: "leased", plan: "enterprise", rps: 1, burst });
    await call(cloud.url, made.key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(cloud.url, made.key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body
      .id as string;
    const caller = await createKey(cloud.api.hub.pool, { workspace: made.workspace.id }); // a full bucket
    const before = (await cloud.api.limiter?.operations(made.workspace.id))?.month ?? 0;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(i % 2 === 0 ? cloud.url : second, caller.key, "GET", `/v1/primitives/${kv}/keys/k${i}`),
      ),
    );
    const admitted = answers.filter((a) => a.status === 404).length; // missing keys: admitted calls
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(burst + leaseCap(burst) * 2);
    const refused = answers.filter((a) => a.status !== 404);
    expect(refused.length).toBe(200 - admitted);
    for (const r of refused) {
      expect([r.status, r.body.error.code]).toEqual([429, "rate_limited"]);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // The rightful caller: another key of the workspace has its own bucket.
    expect((await call(second, made.key, "GET", `/v1/primitives/${kv}/keys/a`)).status).toBe(404);
    // Every admitted (metered) call reaches the month counter once it is flushed.
    expect((await cloud.api.limiter?.operations(made.workspace.id))?.month).toBe(before + admitted + 1);
  });
});

describe("two processes' limiters on one Redis", () => {
  let a: RedisLimiter;
  let b: RedisLimiter;
  beforeAll(() => {
    const options = { now: () => now, timeoutMs: 2000 };
    a = new RedisLimiter("redis://127.0.0.1:6379", cloud.api.hub.pool, options);
    b = new RedisLimiter("redis://127.0.0.1:6379", cloud.api.hub.pool, options);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const principal = (workspace: string, actor: string) => ({
    kind: "account" as const,
    workspace,
    actor,
    groupId: null,
    tools: null,
  });
  const get = (workspace: string, actor: string): LimitCall => ({
    principal: principal(workspace, actor),
    op: kvGet,
    target: "01jzzzzzzzzzzzzzzzzzzzzzzz",
    input: {},
  });

  it("200 concurrent callers of one key: at most burst + a lease each, the rest 429 rate_limited with Retry-After", async () => {
    now += 60_000;
    const made = await createWorkspace(cloud.api.hub.pool, { name: "two", plan: "pro" });
    const ws = made.workspace.id;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => outcome(i % 2 === 0 ? a : b, get(ws, "key:racer"))),
    );
    const counted = tally(answers);
    const admitted = counted.ok ?? 0;
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(60 + leaseCap(60) * 2);
    expect(counted).toEqual({ ok: admitted, "429 rate_limited retry 1": 200 - admitted });
    // The rightful caller: another credential of the workspace, through either process.
    expect(await outcome(a, get(ws, "key:other"))).toBe("ok");
    expect(await outcome(b, get(ws, "key:other"))).toBe("ok");
    await Promise.all([a.flush(), b.flush()]);
    expect(Number(await redis.get(limitKeys(ws).ops + month))).toBe(admitted + 2);
  });

  it("Starter near its cap: past it by at most the unflushed bound per process, then 429 plan_limit; counts reach Redis", async () => {
    now += 60_000;
    const made = await createWorkspace(cloud.api.hub.pool, { name: "capped", plan: "starter" });
    const ws = made.workspace.id;
    const cap = STARTER_CAPS.operations;
    const start = cap - 10;
    await redis.set(limitKeys(ws).ops + month, start);
    // 300 calls at once through both processes, from 10 keys (30 each: under their bursts).
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => outcome(i % 2 === 0 ? a : b, get(ws, `key:k${i % 10}`))),
    );
    const counted = tally(answers);
    const admitted = counted.ok ?? 0;
    expect(admitted).toBeGreaterThan(0);
    expect(start + admitted - cap).toBeLessThanOrEqual(UNFLUSHED_CAP * 2);
    expect(counted).toEqual({ ok: admitted, "429 plan_limit": 300 - admitted });
    await Promise.all([a.flush(), b.flush()]);
    expect(Number(await redis.get(limitKeys(ws).ops + month))).toBe(start + admitted);
    // Once the processes know the figure, each refuses at once.
    expect(await outcome(a, get(ws, "key:late"))).toBe("429 plan_limit");
    expect(await outcome(b, get(ws, "key:late"))).toBe("429 plan_limit");
    // The rightful caller: a Pro workspace is never cut off.
    const pro = await createWorkspace(cloud.api.hub.pool, { name: "paying", plan: "pro" });
    expect(await outcome(a, get(pro.workspace.id, "key:k0"))).toBe("ok");
  });
});
