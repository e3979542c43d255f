// Key budgets against a moved clock (issue 41, item 1): the limit script takes the test's time
// instead of Redis's, so a budget's period ends and refills without waiting. Also: a key's IP
// allowlist is checked against the trusted proxy's header (PRIM_CLIENT_IP_HEADER), not the socket.
import { createKey, createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let now = Date.UTC(2026, 10, 30, 23, 59, 0); // 2026-11-30 23:59 UTC: a day and a month end in 60 s
let cloud: TestCloud;
let workspace: string;
let accountKey: string;
let kv: string;

beforeAll(async () => {
  cloud = await startCloud(
    "key_budget_clock",
    { PRIM_LIMITS: "on", PRIM_CLIENT_IP_HEADER: "x-forwarded-for" },
    { limits: { now: () => now, timeoutMs: 2000 } },
  );
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "budgets", plan: "pro" });
  workspace = ws.workspace.id;
  accountKey = ws.key;
  await call(cloud.url, accountKey, "POST", "/v1/groups", { name: "app" });
  kv = (await call(cloud.url, accountKey, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body
    .id;
});
afterAll(async () => {
  await cloud?.stop();
});

/** One metered call (a kv read of a missing key: 404 once admitted). */
const get = (key: string) => call(cloud.url, key, "GET", `/v1/primitives/${kv}/keys/a`);

describe("a key's budget per period", () => {
  it("per month: 3 metered calls, then 429 with Retry-After until the 1st (UTC); unmetered calls pass; refills", async () => {
    now = Date.UTC(2026, 10, 30, 23, 59, 0);
    const key = (await createKey(cloud.api.hub.pool, { workspace, budget: { per: "month", limit: 3 } })).key;
    for (let i = 0; i < 3; i++) expect((await get(key)).status).toBe(404);
    const refused = await get(key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(refused.body.error.message).toContain("3 operations per month");
    expect(refused.headers.get("retry-after")).toBe("60");
    // Not metered: whoami spends nothing and still answers.
    expect((await call(cloud.url, key, "GET", "/v1/whoami")).status).toBe(200);
    // The workspace's own key, same store, same moment: admitted.
    expect((await get(accountKey)).status).toBe(404);
    now = Date.UTC(2026, 11, 1, 0, 0, 0); // December: refilled
    for (let i = 0; i < 3; i++) expect((await get(key)).status).toBe(404);
    expect((await get(key)).status).toBe(429);
  });

  it("per day: Retry-After counts to UTC midnight, and the next day refills", async () => {
    now = Date.UTC(2027, 0, 15, 22, 0, 0); // two hours before midnight
    const key = (await createKey(cloud.api.hub.pool, { workspace, budget: { per: "day", limit: 2 } })).key;
    for (let i = 0; i < 2; i++) expect((await get(key)).status).toBe(404);
    const refused = await get(key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("7200");
    now = Date.UTC(2027, 0, 16, 0, 0, 1);
    expect((await get(key)).status).toBe(404);
  });

  it("in total: 403 forbidden naming the budget, and no period refills it", async () => {
    now = Date.UTC(2027, 1, 1, 12, 0, 0);
    const key = (await createKey(cloud.api.hub.pool, { workspace, budget: { total: 2 } })).key;
    for (let i = 0; i < 2; i++) expect((await get(key)).status).toBe(404);
    const refused = await get(key);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden" });
    expect(refused.body.error.message).toContain("budget of 2 operations");
    expect(refused.headers.get("retry-after")).toBeNull();
    now = Date.UTC(2027, 5, 1, 12, 0, 0);
    expect((await get(key)).status).toBe(403);
    expect((await get(accountKey)).status).toBe(404);
  });
});

describe("a key's IP allowlist behind a trusted proxy", () => {
  it("checks the proxy header's last entry (what the proxy saw), not what the client put before it", async () => {
    const key = (await createKey(cloud.api.hub.pool, { workspace, ipAllow: ["203.0.113.0/24"] })).key;
    const from = (forwarded: string) =>
      fetch(`${cloud.url}/v1/primitives/${kv}/keys/a`, {
        headers: { authorization: `Bearer ${key}`, "x-forwarded-for": forwarded },
      });
    expect((await from("203.0.113.7")).status).toBe(404);
    expect((await from("198.51.100.1, 203.0.113.7")).status).toBe(404);
    // A client claiming an allowed address before the proxy's own entry gains nothing.
    const spoofed = await from("203.0.113.7, 198.51.100.1");
    expect(spoofed.status).toBe(403);
    expect(((await spoofed.json()) as any).error.message).toContain("198.51.100.1");
  });
});
