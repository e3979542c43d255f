// Keys for agents (issue 41, item 1) end to end: two api cells and apps/mcp as child processes
// (startProbeCloud) over the machine's Postgres and Redis. A key's budget is counted in the
// limit script's one round trip, so 200 concurrent calls split across both processes admit
// exactly the budget, and over MCP the budget crosses the internal invoke with the principal;
// an expired key answers 401 on REST and MCP; a client address outside a
// key's ip_allow answers 403. Each refusal is shown beside a key that succeeds on the same store.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKey } from "@prim/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, type RunningProcess, startMcpProcess } from "./cell-processes.js";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

let cloud: ProbeCloud;
let ws: ProbeWorkspace;
let kvId: string;
let mcp: RunningProcess & { mcpUrl: string };

beforeAll(async () => {
  // Redis may take longer than the production 50 ms to answer while a process parses 100
  // requests at once; then it limits in process, where a budgeted key is refused (never over).
  cloud = await startProbeCloud("key_limits", undefined, { PRIM_LIMITS_TIMEOUT_MS: "2000" });
  // Enterprise at 10,000/s: the rate limit stays out of the way of the budget.
  ws = await cloud.workspace("agents", "enterprise", { on: "cell-a" });
  const a = cloud.cell("cell-a").url;
  await ok(a, ws.key, "POST", "/v1/groups", { name: "app" });
  kvId = (await ok(a, ws.key, "POST", "/v1/primitives", { name: "state", type: "kv", group: "app" })).id;
  mcp = await startMcpProcess(
    childEnv({
      DATABASE_URL: cloud.env.DATABASE_URL as string,
      REDIS_URL: cloud.env.REDIS_URL as string,
      PRIM_INTERNAL_URL: cloud.cell("cell-a").internalUrl,
      PRIM_INTERNAL_SECRET: cloud.env.PRIM_INTERNAL_SECRET as string,
      PRIM_MCP_PORT: "0",
    }),
  );
}, 120_000);
afterAll(async () => {
  await mcp?.kill("SIGTERM");
  await cloud?.stop();
});

/**
 * `n` kv writes at once with `key`, alternating between the two processes. Each process first
 * answers `whoami` with it (not metered: it spends none of the budget), so the burst measures the
 * budget, not 200 first lookups of a new key in Postgres at once.
 */
async function burst(key: string, n: number): Promise<{ status: number; body: any; retryAfter: string | null }[]> {
  const entries = [cloud.cell("cell-a").url, cloud.cell("cell-b").url];
  for (const entry of entries) await ok(entry, key, "GET", "/v1/whoami");
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(`${entries[i % 2]}/v1/primitives/${kvId}/keys/k${i}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ value: i }),
      });
      return { status: res.status, body: await res.json(), retryAfter: res.headers.get("retry-after") };
    }),
  );
}

const rest = (key: string, cell: string) =>
  fetch(`${cloud.cell(cell).url}/v1/primitives/${kvId}/keys/probe`, { headers: { authorization: `Bearer ${key}` } });

/** An MCP `initialize` with `key`: its HTTP status (the edge decides before any session). */
async function mcpStatus(key: string): Promise<number> {
  const res = await fetch(mcp.mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-service-group": "app",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "key-limits", version: "1" } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

async function mcpTools(key: string): Promise<string[]> {
  return withMcp(key, async (client) => (await client.listTools()).tools.map((t) => t.name));
}

async function withMcp<T>(key: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const transport = new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}`, "x-service-group": "app" } },
  });
  const client = new Client({ name: "key-limits", version: "1.0.0" });
  await client.connect(transport);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

describe("key budgets across processes", () => {
  it("a total budget of 50 admits exactly 50 of 200 concurrent writes; the rest get 403 naming the budget", async () => {
    const agent = await createKey(cloud.pool, { workspace: ws.id, name: "fifty", budget: { total: 50 } });
    const answers = await burst(agent.key, 200);
    const admitted = answers.filter((a) => a.status === 200);
    expect(admitted).toHaveLength(50);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe("forbidden");
      expect(refused.body.error.message).toContain("budget of 50 operations");
    }
    // Spent for good, through either process; the workspace's own key writes the same store.
    expect((await rest(agent.key, "cell-b")).status).toBe(403);
    expect((await burst(ws.key, 2)).map((a) => a.status)).toEqual([200, 200]);
  }, 60_000);

  it("a per-day budget of 30 admits exactly 30 of 200; the rest get 429 with Retry-After until UTC midnight", async () => {
    const agent = await createKey(cloud.pool, { workspace: ws.id, name: "daily", budget: { per: "day", limit: 30 } });
    const answers = await burst(agent.key, 200);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(30);
    const [y, m, d] = utcToday();
    const midnight = Math.ceil((Date.UTC(y, m, d + 1) - Date.now()) / 1000);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("rate_limited");
      expect(refused.body.error.message).toContain("30 operations per day");
      const retry = Number(refused.retryAfter);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(midnight + 5);
    }
    // Its own counter: another key's budget is untouched by this one's.
    const other = await createKey(cloud.pool, { workspace: ws.id, budget: { per: "day", limit: 30 } });
    expect((await burst(other.key, 4)).map((a) => a.status)).toEqual([200, 200, 200, 200]);
  }, 60_000);
});

describe("key budgets over MCP", () => {
  it("the budget crosses the internal invoke: 3 tool calls admitted, the 4th a tool error naming the budget", async () => {
    const agent = await createKey(cloud.pool, { workspace: ws.id, name: "mcp-three", budget: { total: 3 } });
    const results = await withMcp(agent.key, async (client) => {
      const out: { isError: boolean; text: string }[] = [];
      for (let i = 0; i < 4; i++) {
        const res = (await client.callTool({
          name: "kv_set",
          arguments: { primitive: "state", key: `m${i}`, value: i },
        })) as {
          isError?: boolean;
          content: { type: string; text: string }[];
        };
        out.push({ isError: res.isError === true, text: res.content[0]?.text ?? "" });
      }
      return out;
    });
    expect(results.map((r) => r.isError)).toEqual([false, false, false, true]);
    expect(JSON.parse(results[3]?.text as string).error).toMatchObject({ code: "forbidden" });
    expect(results[3]?.text).toContain("budget of 3 operations");
    // The same key through REST: spent there too (one counter); the workspace key writes on.
    expect((await rest(agent.key, "cell-b")).status).toBe(403);
    expect((await rest(ws.key, "cell-b")).status).toBe(404);
  }, 60_000);
});

/** [year, month index, day] of today in UTC. */
function utcToday(): [number, number, number] {
  const now = new Date();
  return [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
}

describe("key expiry on REST and MCP", () => {
  it("a key past its expires_at answers 401 invalid_token everywhere; an unexpired one works", async () => {
    const live = await createKey(cloud.pool, { workspace: ws.id, expiresAt: Date.now() + 3_600_000 });
    const gone = await createKey(cloud.pool, { workspace: ws.id, expiresAt: Date.now() + 3_600_000 });
    await cloud.pool.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [gone.id]);
    for (const cell of ["cell-a", "cell-b"]) {
      expect((await rest(live.key, cell)).status).toBe(404); // reached the store: no such key
      const res = await rest(gone.key, cell);
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe("invalid_token");
    }
    expect(await mcpTools(live.key)).toContain("kv_get");
    expect(await mcpStatus(gone.key)).toBe(401);
  }, 60_000);

  it("a cached key stops at its expiry (checked on every cache hit, not only on a miss)", async () => {
    const expiresAt = Date.now() + 1500;
    const brief = await createKey(cloud.pool, { workspace: ws.id, expiresAt });
    // Used first: every process caches it (their TTL is 30 s).
    for (const cell of ["cell-a", "cell-b"]) expect((await rest(brief.key, cell)).status).toBe(404);
    expect(await mcpStatus(brief.key)).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
    for (const cell of ["cell-a", "cell-b"]) expect((await rest(brief.key, cell)).status).toBe(401);
    expect(await mcpStatus(brief.key)).toBe(401);
  }, 60_000);
});

describe("key IP allowlists on REST and MCP", () => {
  it("a request from outside every CIDR gets 403 naming ip_allow; the loopback-allowed key passes", async () => {
    const elsewhere = await createKey(cloud.pool, { workspace: ws.id, ipAllow: ["10.0.0.0/8", "2001:db8::/32"] });
    const here = await createKey(cloud.pool, { workspace: ws.id, ipAllow: ["127.0.0.0/8", "::1/128"] });
    for (const cell of ["cell-a", "cell-b"]) {
      const res = await rest(elsewhere.key, cell);
      expect(res.status).toBe(403);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("forbidden");
      expect(body.error.message).toContain("IP allowlist");
      expect((await rest(here.key, cell)).status).toBe(404);
    }
    expect(await mcpStatus(elsewhere.key)).toBe(403);
    expect(await mcpTools(here.key)).toContain("kv_get");
  }, 60_000);
});
