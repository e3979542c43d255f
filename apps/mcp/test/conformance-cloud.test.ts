// The official MCP conformance suite's server scenarios against the cloud's `/mcp` (apps/mcp
// over a real cell), authenticated with a one-group `pk_` key. The CLI (0.1.16) sends no
// credentials of its own, so it talks to a small forwarding proxy (`@prim/testkit/mcp`'s
// `authProxy`) that adds the key to every request and streams both ways (SSE included). The
// suite's authorization scenarios are client scenarios only (0.1.13 to 0.1.16: they test a
// client against a mock server), so none applies to the authorization server; its own tests are
// oauth-flow and oauth-negative.
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createKey, createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { authProxy, CONFORMANCE_INSTALLED, expectConformance, NOT_SERVED } from "@prim/testkit/mcp";
import { afterAll, beforeAll, describe, it } from "vitest";
import { createMcpApp, type McpApp, readMcpEnv } from "../src/index.js";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let mcp: McpApp;
let proxy: Server;
let proxyUrl: string;

beforeAll(async () => {
  cloud = await startCloud("mcpconf", { PRIM_INTERNAL_SECRET: SECRET });
  const internalUrl = cloud.internalUrl;
  const upstream: { target?: URL; key?: string } = {};
  proxy = authProxy(upstream);
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  proxyUrl = `${proxyOrigin}/mcp`;
  // The suite's rebinding scenario sends `Origin: <the URL it was given>` and expects it
  // accepted, and `Origin: http://evil.example.com` and expects a 4xx.
  mcp = await createMcpApp(
    readMcpEnv({
      DATABASE_URL: cloud.databaseUrl,
      PRIM_INTERNAL_URL: internalUrl,
      PRIM_INTERNAL_SECRET: SECRET,
      PRIM_MCP_ALLOWED_ORIGINS: proxyOrigin,
    }),
  );
  upstream.target = new URL(await mcp.app.listen({ port: 0, host: "127.0.0.1" }));
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "Conformance", plan: "pro" });
  await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "conformance" });
  upstream.key = (await createKey(cloud.api.hub.pool, { workspace: ws.workspace.id, group: "conformance" })).key;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await mcp?.close();
  await cloud?.stop();
});

describe("MCP conformance of the cloud endpoint (server scenarios)", () => {
  it.skipIf(!CONFORMANCE_INSTALLED)(
    "passes every scenario of what it serves with a key (Origin checks included); the rest fail only for what it does not serve",
    { timeout: 180_000 },
    async () => {
      await expectConformance(proxyUrl, NOT_SERVED);
    },
  );
});
