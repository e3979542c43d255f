// Redis going away while the api serves (issue 19, Faults): calls still succeed, an in-process
// bucket limits, counts wait in memory and reach Redis when it is back, one log line per change.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { createKey, createWorkspace } from "@prim/db";
import { call, startCloud } from "@prim/testkit/cloud";
import { Redis } from "ioredis";
import { afterAll, expect, it } from "vitest";
import { limitKeys } from "../src/index.js";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** A private redis-server on `port` without persistence; resolves once it accepts connections. */
async function redisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let log = "";
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${log}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes("Ready to accept connections")) resolve();
    });
  });
  child.removeAllListeners("exit");
  child.stdout?.resume();
  return child;
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) await stop(child);
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

it("keeps serving while Redis is down, limits in process, and hands the counts back when it returns", async () => {
  const port = await freePort();
  children.push(await redisServer(port));
  const lines: string[] = [];
  const cloud = await startCloud(
    "limits_outage",
    { PRIM_LIMITS: "on", REDIS_URL: `redis://127.0.0.1:${port}` },
    { limits: { log: (line) => lines.push(line) } },
  );
  try {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan: "pro" });
    await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body
      .id;
    const put = (i: number) => call(cloud.url, ws.key, "PUT", `/v1/primitives/${kv}/keys/k${i}`, { value: i });
    expect((await put(0)).status).toBe(200);
    // Counted in Redis before it goes (counts are sent in batches: an unsent one would outlive
    // the old server in the process and reach the new one, as the outage's own counts do).
    await cloud.api.limiter?.flush();

    await stop(children.pop() as ChildProcess);
    // The in-process bucket starts full: a burst of 60 (plus what refills at 20/s meanwhile),
    // then 429 with Retry-After.
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => put(i + 1)));
    const refill = Math.ceil(((Date.now() - started) / 1000) * 20);
    const admitted = answers.filter((a) => a.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(60);
    expect(admitted).toBeLessThanOrEqual(60 + refill);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.body.error.code).toBe("rate_limited");
    expect(refused?.headers.get("retry-after")).toBe("1");
    expect(lines.filter((l) => l.includes("does not answer"))).toHaveLength(1);

    children.push(await redisServer(port));
    await until(() => lines.some((l) => l.includes("Redis is back")));
    const month = new Date().toISOString().slice(0, 7).replace("-", "");
    const redis = new Redis(`redis://127.0.0.1:${port}`);
    try {
      // Those admitted while Redis was away (the one before went with the old server's data).
      expect(Number(await redis.get(limitKeys(ws.workspace.id).ops + month))).toBe(admitted);
    } finally {
      redis.disconnect();
    }
    expect((await put(100)).status).toBe(200);
    expect(lines).toHaveLength(2);
  } finally {
    await cloud.stop();
  }
});

it("refuses a budgeted key's metered calls while Redis is down (429, retry in 1 s); others go on; the budget is back with Redis", async () => {
  const port = await freePort();
  children.push(await redisServer(port));
  const lines: string[] = [];
  const cloud = await startCloud(
    "limits_outage_budget",
    { PRIM_LIMITS: "on", REDIS_URL: `redis://127.0.0.1:${port}` },
    { limits: { log: (line) => lines.push(line) } },
  );
  try {
    const ws = await createWorkspace(cloud.api.hub.pool, { name: "w", plan: "pro" });
    await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body
      .id;
    const agent = await createKey(cloud.api.hub.pool, { workspace: ws.workspace.id, budget: { total: 5 } });
    const get = (key: string) => call(cloud.url, key, "GET", `/v1/primitives/${kv}/keys/a`);
    expect((await get(agent.key)).status).toBe(404); // admitted: 1 of 5 spent

    await stop(children.pop() as ChildProcess);
    const refused = await get(agent.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(refused.body.error.message).toContain("budget cannot be counted");
    expect(refused.headers.get("retry-after")).toBe("1");
    // Unmetered calls of the same key, and the workspace key's metered ones, still succeed.
    expect((await call(cloud.url, agent.key, "GET", "/v1/whoami")).status).toBe(200);
    expect((await get(ws.key)).status).toBe(404);

    // A fresh server (the old one's counts are gone with it): the budget counts from there.
    children.push(await redisServer(port));
    await until(() => lines.some((l) => l.includes("Redis is back")));
    for (let i = 0; i < 5; i++) expect((await get(agent.key)).status).toBe(404);
    expect((await get(agent.key)).status).toBe(403);
  } finally {
    await cloud.stop();
  }
});
