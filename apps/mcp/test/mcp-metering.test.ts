// MCP calls through apps/mcp are limited and metered by the cell (issue 19): each tools/call of
// a batch counts once; initialize, tools/list and the primitive lookups count nothing.
import { randomBytes } from "node:crypto";
import { limitKeys } from "@prim/api";
import { createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createMcpApp, type McpApp, readMcpEnv } from "../src/index.js";

const SECRET = randomBytes(24).toString("hex");
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
let cloud: TestCloud;
let mcp: McpApp;
let url: string;
const redis = new Redis("redis://127.0.0.1:6379");

beforeAll(async () => {
  cloud = await startCloud("mcp_metering", { PRIM_INTERNAL_SECRET: SECRET, PRIM_LIMITS: "on" });
  const internalUrl = cloud.internalUrl;
  mcp = await createMcpApp(
    readMcpEnv({ DATABASE_URL: cloud.databaseUrl, PRIM_INTERNAL_URL: internalUrl, PRIM_INTERNAL_SECRET: SECRET }),
  );
  url = `${await mcp.app.listen({ port: 0, host: "127.0.0.1" })}/mcp`;
}, 60_000);

afterAll(async () => {
  redis.disconnect();
  await mcp?.close();
  await cloud?.stop();
});

const post = (headers: Record<string, string>, body: unknown) =>
  fetch(url, { method: "POST", headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });

it("counts each tools/call of a batch once, and nothing for initialize, tools/list or lookups", async () => {
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "m", plan: "pro" });
  await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
  await call(cloud.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
  const month = new Date().toISOString().slice(0, 7).replace("-", "");
  // The cell's counts reach Redis in batches: what it holds is sent first.
  const counted = async () => {
    await cloud.api.limiter?.flush();
    return Number((await redis.get(limitKeys(ws.workspace.id).ops + month)) ?? 0);
  };
  expect(await counted()).toBe(0);

  const auth = { authorization: `Bearer ${ws.key}`, "x-service-group": "app" };
  const init = await post(auth, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "m", version: "1" } },
  });
  expect(init.status).toBe(200);
  await init.text();
  const headers = {
    ...auth,
    "mcp-session-id": init.headers.get("mcp-session-id") as string,
    "mcp-protocol-version": "2025-03-26",
  };
  expect((await post(headers, { jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
  const list = await post(headers, { jsonrpc: "2.0", id: 1, method: "tools/list" });
  await list.text();
  expect(await counted()).toBe(0);

  const calls = [1, 2, 3].map((i) => ({
    jsonrpc: "2.0",
    id: 10 + i,
    method: "tools/call",
    params: { name: "kv_set", arguments: { primitive: "cache", key: `k${i}`, value: i } },
  }));
  const batch = await post(headers, calls);
  expect(batch.status).toBe(200);
  const text = await batch.text();
  expect(text).toContain('"id":13');
  expect(await counted()).toBe(3);
});
