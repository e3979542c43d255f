// The official MCP conformance suite's server scenarios against the cloud's `/mcp` (apps/mcp
// over a real cell), authenticated with a one-group `pk_` key. The CLI (0.1.13) sends no
// credentials of its own, so it talks to a small forwarding proxy here that adds the key to
// every request and streams both ways (SSE included). The suite's authorization scenarios are
// client scenarios only (0.1.13 to 0.1.16: they test a client against a mock server), so none
// applies to the authorization server; its own tests are oauth-flow and oauth-negative.
import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createKey, createWorkspace } from "@prim/db";
import { listenInternal } from "@prim/http";
import { afterAll, beforeAll, describe, it } from "vitest";
import { CONFORMANCE_INSTALLED, expectConformance, NOT_SERVED } from "../../../packages/mcp/test/conformance-runner.js";
import { call, startCloud, type TestCloud } from "../../api/test/cloud.js";
import { createMcpApp, type McpApp, readMcpEnv } from "../src/index.js";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let mcp: McpApp;
let proxy: Server;
let proxyUrl: string;

/** Forwards every request to `target`, with `Authorization: Bearer <key>` added. */
function authProxy(target: URL, key: string): Server {
  return createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${key}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
    res.on("close", () => upstream.destroy());
  });
}

beforeAll(async () => {
  cloud = await startCloud("mcpconf", { PRIM_INTERNAL_SECRET: SECRET });
  const internalUrl = await listenInternal(cloud.api.internal as NonNullable<typeof cloud.api.internal>);
  mcp = await createMcpApp(
    readMcpEnv({ DATABASE_URL: cloud.databaseUrl, PRIM_INTERNAL_URL: internalUrl, PRIM_INTERNAL_SECRET: SECRET }),
  );
  const target = new URL(await mcp.app.listen({ port: 0, host: "127.0.0.1" }));
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "Conformance", plan: "pro" });
  await call(cloud.url, ws.key, "POST", "/v1/groups", { name: "conformance" });
  const key = await createKey(cloud.api.hub.pool, { workspace: ws.workspace.id, group: "conformance" });
  proxy = authProxy(target, key.key);
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await mcp?.close();
  await cloud?.stop();
});

describe("MCP conformance of the cloud endpoint (server scenarios)", () => {
  it.skipIf(!CONFORMANCE_INSTALLED)(
    "passes every scenario of what it serves with a key; the rest fail only for what it does not serve",
    { timeout: 180_000 },
    async () => {
      await expectConformance(proxyUrl, {
        ...NOT_SERVED,
        // The cloud is reached by its public name, with a Bearer credential on every request
        // (no ambient authority a rebinding page could borrow), so it does not pin the Host
        // to localhost as `prim dev` does.
        "dns-rebinding-protection": /Expected HTTP 4xx for invalid Host\/Origin headers/,
      });
    },
  );
});
