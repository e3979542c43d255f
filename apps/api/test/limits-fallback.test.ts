// The limiter while Redis is away (issue 35, item 14): each api process admits its share of a
// credential's bucket (the plan's burst and rate divided by the live cells in Postgres), and
// re-reads plans and cells from Postgres every refresh interval; once Redis is back, a plan
// changed meanwhile is what Redis serves. The limiter's clock is the test's, so no test waits
// for time to pass; Redis "goes away" behind a door the test cuts (redis-cut.ts).
import { createWorkspace, registerCell, setCellState, setPlan } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCut } from "./redis-cut.js";

const REFRESH_MS = 10_000;
let now = Date.UTC(2026, 10, 12, 9, 0, 0);
let cloud: TestCloud;
let door: RedisCut;
const lines: string[] = [];

beforeAll(async () => {
  door = await RedisCut.open();
  cloud = await startCloud(
    "limits_fallback",
    { PRIM_LIMITS: "on", REDIS_URL: door.url },
    { limits: { now: () => now, timeoutMs: 2000, fallbackRefreshMs: REFRESH_MS, log: (line) => lines.push(line) } },
  );
});
afterAll(async () => {
  await cloud?.stop();
  await door?.close();
});

async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Redis back (the limiter's probe has seen it), and the clock past every bucket's refill. */
async function redisBack(): Promise<void> {
  const before = lines.filter((l) => l.includes("Redis is back")).length;
  await door.reopen();
  await until(() => lines.filter((l) => l.includes("Redis is back")).length > before);
  now += 60_000;
}

/** A workspace with group `app` and kv `cache`, made while Redis answers. */
async function workspace(plan: "starter" | "pro") {
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan });
  await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
  const kv = (await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body
    .id as string;
  now += 10_000;
  return { id: ws.workspace.id, key: ws.key, kv };
}

/** `n` reads at once; how many were admitted (the key is missing: 404) and how many limited. */
async function burst(w: { key: string; kv: string }, n: number) {
  const answers = await Promise.all(
    Array.from({ length: n }, () => call(cloud.url, w.key, "GET", `/v1/primitives/${w.kv}/keys/missing`)),
  );
  const statuses = answers.map((a) => `${a.status} ${a.body?.error?.code ?? ""}`);
  return {
    admitted: statuses.filter((s) => s === "404 not_found").length,
    limited: statuses.filter((s) => s === "429 rate_limited").length,
  };
}

describe("Redis away", () => {
  it("a process admits ceil(burst/N) at once and rate/N per second, N the live cells in Postgres, re-read every interval", async () => {
    const w = await workspace("pro"); // 20/s, bursts of 60
    // Three live api processes (this one and two closed cells: they take no new workspace but
    // serve), and a down one that does not count.
    for (const cell of ["cell-b", "cell-c", "cell-d"]) {
      await registerCell(cloud.api.hub.pool, cell, null);
      await setCellState(cloud.api.hub.pool, cell, cell === "cell-d" ? "down" : "closed");
    }
    await door.cut();
    expect(await burst(w, 100)).toEqual({ admitted: 20, limited: 80 });
    now += 1000; // 20/3 tokens come back in a second
    expect(await burst(w, 20)).toEqual({ admitted: 6, limited: 14 });

    // A cell goes down: after the refresh interval this process's share is half the bucket.
    await setCellState(cloud.api.hub.pool, "cell-c", "down");
    now += REFRESH_MS;
    expect(await burst(w, 50)).toEqual({ admitted: 30, limited: 20 });
    for (const cell of ["cell-b", "cell-d"]) await setCellState(cloud.api.hub.pool, cell, "down");
    await redisBack();
    // With Redis the bucket is the plan's whole one again.
    expect(await burst(w, 70)).toEqual({ admitted: 60, limited: 10 });
  });

  it("a plan changed in Postgres applies after the refresh interval, and still once Redis is back", async () => {
    const w = await workspace("starter");
    const snapshot = () => call(cloud.url, w.key, "POST", `/v1/primitives/${w.kv}/snapshots`, {});
    expect((await snapshot()).status).toBe(403); // Starter has no snapshots; its plan is now cached in Redis
    await door.cut();
    expect((await snapshot()).status).toBe(403);
    // The upgrade reaches Postgres; dropping the plan cached in Redis cannot (Redis is away).
    await setPlan(cloud.api.hub.pool, { workspace: w.id, plan: "pro" }, async () => {});
    expect((await snapshot()).status).toBe(403); // the last figures hold within the interval
    now += REFRESH_MS;
    expect((await snapshot()).status).toBe(201);
    await redisBack();
    // Redis still held the Starter plan: the limiter dropped it on its return.
    expect((await snapshot()).status).toBe(201);
  });
});
