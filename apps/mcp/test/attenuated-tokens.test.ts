// Offline-attenuated `pa_` tokens on apps/mcp (issue 41, item 3): a token narrowed to one group
// and one tool reaches that group without the header and lists only its tool; a session started
// with it is refused on its next request once the root key is revoked (no wait: the revocation
// fan-out drops it from this process's cache), while another key's token goes on.
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKey, createWorkspace, hashKey, revokeKey } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { attenuate } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpApp } from "../src/index.js";
import { listeningMcp } from "./in-process.js";
import { rawInitialize } from "./raw.js";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let mcp: McpApp;
let url: string;
let key: string;
let workspace: string;
const clients: Client[] = [];

beforeAll(async () => {
  cloud = await startCloud("mcp-attenuate", { PRIM_INTERNAL_SECRET: SECRET });
  ({ mcp, url } = await listeningMcp({
    databaseUrl: cloud.databaseUrl,
    internalUrl: cloud.internalUrl,
    secret: SECRET,
  }));
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "Acme", plan: "pro" });
  key = ws.key;
  workspace = ws.workspace.id;
  for (const group of ["app", "ops"]) {
    await call(cloud.url, key, "POST", "/v1/groups", { name: group });
    await call(cloud.url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group });
  }
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await mcp?.close();
  await cloud?.stop();
});

async function connect(credential: string, group?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (group !== undefined) headers["x-service-group"] = group;
  const client = new Client({ name: "attenuated", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe("pa_ tokens over MCP", () => {
  it("a token for one group and one tool: that group without the header, only that tool; another group is 403", async () => {
    await (await connect(key, "app")).callTool({
      name: "kv_set",
      arguments: { primitive: "cache", key: "k", value: 7 },
    });
    const token = await attenuate(key, [
      { type: "group", group: "app" },
      { type: "tools", tools: ["kv_get"] },
    ]);
    const client = await connect(token);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["kv_get", "primitive_list"]);
    const got = await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "k" } });
    expect(structured(got)).toMatchObject({ key: "k", value: 7 });
    const refused = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "k", value: 8 } });
    expect(structured(refused)).toMatchObject({ error: { code: "tool_not_allowed" } });
    const other = await rawInitialize(url, { authorization: `Bearer ${token}`, "x-service-group": "ops" });
    expect(other.status).toBe(403);
  });

  it("a tampered token is 401 invalid_token with the resource's challenge", async () => {
    const token = await attenuate(key, [{ type: "read_only" }]);
    // One character of the signature changed in its significant bits (the first of its last part).
    const at = token.lastIndexOf(".") + 1;
    const tampered = `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;
    const res = await rawInitialize(url, { authorization: `Bearer ${tampered}`, "x-service-group": "app" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await rawInitialize(url, { authorization: `Bearer ${token}`, "x-service-group": "app" })).status).toBe(200);
  });

  it("revoking the root refuses its token's open session on the next request; another key's goes on", async () => {
    const pool = cloud.api.hub.pool;
    const doomed = await createKey(pool, { workspace });
    const kept = await createKey(pool, { workspace });
    const doomedClient = await connect(await attenuate(doomed.key, [{ type: "read_only" }]), "app");
    const keptClient = await connect(await attenuate(kept.key, [{ type: "read_only" }]), "app");
    const get = { name: "kv_get", arguments: { primitive: "cache", key: "k" } };
    expect(structured(await doomedClient.callTool(get))).toMatchObject({ value: 7 });
    // This process hears the revocation on prim:revoked (its listener calls forget).
    const heard = new Promise<void>((resolve) => {
      const forget = mcp.resolver.forget.bind(mcp.resolver);
      mcp.resolver.forget = (hash) => {
        forget(hash);
        if (hash === hashKey(doomed.key)) resolve();
      };
    });
    // Revoked through the api process: apps/mcp hears it on prim:revoked.
    await revokeKey(pool, doomed.id, async (hash) => {
      cloud.api.resolver.forget(hash);
      await cloud.api.revocations.publish(hash);
    });
    await heard;
    await expect(doomedClient.callTool(get)).rejects.toThrow(/401|invalid_token/);
    expect(structured(await keptClient.callTool(get))).toMatchObject({ value: 7 });
  });

  it("a session belongs to the credential's reach: the key's own session id is 404 to its narrowed token, and back", async () => {
    const token = await attenuate(key, [{ type: "read_only" }]);
    const post = (credential: string, session: string) =>
      fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${credential}`,
          "x-service-group": "app",
          "mcp-session-id": session,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
      });
    const wide = await rawInitialize(url, { authorization: `Bearer ${key}`, "x-service-group": "app" });
    const narrow = await rawInitialize(url, { authorization: `Bearer ${token}`, "x-service-group": "app" });
    const wideId = wide.headers.get("mcp-session-id") as string;
    const narrowId = narrow.headers.get("mcp-session-id") as string;
    expect((await post(token, wideId)).status).toBe(404);
    expect((await post(key, narrowId)).status).toBe(404);
    expect((await post(key, wideId)).status).toBe(200);
    expect((await post(token, narrowId)).status).toBe(200);
  });
});
