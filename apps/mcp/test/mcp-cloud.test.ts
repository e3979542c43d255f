// apps/mcp against a real cell (apps/api's internal invoke), Postgres and Redis, with the
// official MCP SDK client: protected-resource answers, group selection rules 1-3 for pk_ keys,
// tools/list by the key's tools, sessions owned by their credential.
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKey, createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpApp, type McpApp, readMcpEnv } from "../src/index.js";
import { rawInitialize } from "./raw.js";

const SECRET = randomBytes(24).toString("hex");
const PUBLIC = "https://mcp.prim.test";
let cloud: TestCloud;
let mcp: McpApp;
let url: string;
let key: string; // a workspace key (every group)
let workspace: string;
const initialize = (headers: Record<string, string>) => rawInitialize(url, headers);

beforeAll(async () => {
  cloud = await startCloud("mcp", { PRIM_INTERNAL_SECRET: SECRET });
  const internalUrl = cloud.internalUrl;
  mcp = await createMcpApp(
    readMcpEnv({
      DATABASE_URL: cloud.databaseUrl,
      PRIM_INTERNAL_URL: internalUrl,
      PRIM_INTERNAL_SECRET: SECRET,
      PRIM_PUBLIC_MCP_URL: PUBLIC,
      PRIM_AUTH_URL: "https://api.prim.test/oauth",
      PRIM_MCP_ALLOWED_ORIGINS: "https://app.example.com, https://inspector.example.com:8443",
    }),
  );
  url = `${await mcp.app.listen({ port: 0, host: "127.0.0.1" })}/mcp`;
  const ws = await createWorkspace(cloud.api.hub.pool, { name: "Acme", plan: "pro" });
  key = ws.key;
  workspace = ws.workspace.id;
  await call(cloud.url, key, "POST", "/v1/groups", { name: "app" });
  await call(cloud.url, key, "POST", "/v1/groups", { name: "ops" });
  await call(cloud.url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
  await call(cloud.url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "ops" });
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await cloud?.stop();
});

async function connect(credential: string, group?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (group !== undefined) headers["x-service-group"] = group;
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "prim-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe("protected resource", () => {
  it("answers a request without a token 401 with the resource metadata's address", async () => {
    const res = await initialize({});
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(((await res.json()) as { error: { code: string; message: string } }).error.code).toBe("invalid_token");
  });

  it("serves the RFC 9728 document at the path-aware and the root well-known URL", async () => {
    const origin = url.slice(0, -"/mcp".length);
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await fetch(origin + path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: `${PUBLIC}/mcp`,
        authorization_servers: ["https://api.prim.test/oauth"],
        bearer_methods_supported: ["header"],
        scopes_supported: ["mcp"],
        resource_name: "Prim MCP",
      });
    }
  });

  it("answers 401 invalid_token to unknown, malformed and po_ tokens", async () => {
    for (const token of ["pk_unknownunknownunknownunknown12", "nonsense", "po_notissuedyet"]) {
      const res = await initialize({ authorization: `Bearer ${token}`, "x-service-group": "app" });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(((await res.json()) as { error: { code: string; message: string } }).error.code).toBe("invalid_token");
    }
  });
});

describe("browser origins (MCP transport: Origin validated)", () => {
  const good = { "x-service-group": "app" };
  it("refuses an Origin not on the list with 403 before looking at the credential", async () => {
    for (const origin of [
      "http://evil.example.com",
      "https://app.example.com.evil.test",
      "null",
      "https://app.example.com:444",
    ]) {
      const res = await initialize({ ...good, authorization: `Bearer ${key}`, origin });
      expect(res.status, origin).toBe(403);
      expect(((await res.json()) as { error: { code: string; message: string } }).error.code).toBe("forbidden");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
    // Even without a credential: the origin answers first.
    expect((await initialize({ origin: "http://evil.example.com" })).status).toBe(403);
  });

  it("accepts no Origin, its own origin and the configured ones, with CORS headers for browsers", async () => {
    expect((await initialize({ ...good, authorization: `Bearer ${key}` })).status).toBe(200);
    for (const origin of [PUBLIC, "https://app.example.com", "https://inspector.example.com:8443"]) {
      const res = await initialize({ ...good, authorization: `Bearer ${key}`, origin });
      expect(res.status, origin).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("access-control-expose-headers")).toContain("mcp-session-id");
    }
    // A 401 to an allowed browser is readable by it (the challenge names the metadata).
    const challenge = await initialize({ origin: "https://app.example.com" });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });

  it("answers the CORS preflight of an allowed origin, and refuses another's", async () => {
    const preflight = (origin: string) =>
      fetch(url, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type, mcp-session-id",
        },
      });
    const ok = await preflight("https://app.example.com");
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(ok.headers.get("access-control-allow-headers")).toContain("mcp-session-id");
    expect(ok.headers.get("access-control-allow-methods")).toContain("POST");
    expect((await preflight("http://evil.example.com")).status).toBe(403);
  });

  it("serves the resource metadata to any origin", async () => {
    const origin = url.slice(0, -"/mcp".length);
    const res = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`, {
      headers: { origin: "http://anywhere.example.com" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("refuses a start with an allow-list that is not origins", () => {
    expect(() =>
      readMcpEnv({
        DATABASE_URL: cloud.databaseUrl,
        PRIM_INTERNAL_SECRET: SECRET,
        PRIM_MCP_ALLOWED_ORIGINS: "not a url",
      }),
    ).toThrow(/PRIM_MCP_ALLOWED_ORIGINS/);
  });
});

describe("group selection", () => {
  it("rule 2: a key for every group must name one in X-Service-Group (400 invalid_request)", async () => {
    const res = await initialize({ authorization: `Bearer ${key}` });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("X-Service-Group"),
    });
  });

  it("a key for every group reaches the group it names, and data flows through the cell", async () => {
    const { client } = await connect(key, "app");
    const set = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "k", value: 42 } });
    expect(structured(set)).toMatchObject({ key: "k", value: 42 });
    const rest = await call(cloud.url, key, "GET", "/v1/primitives?group=app");
    const id = rest.body.data[0].id;
    expect((await call(cloud.url, key, "GET", `/v1/primitives/${id}/keys/k`)).body.value).toBe(42);
    await client.close();
  });

  it("rule 1: a one-group key reaches its group without the header; rule 3: another group is 403 group_mismatch", async () => {
    const scoped = await createKey(cloud.api.hub.pool, { workspace, group: "ops" });
    const { client } = await connect(scoped.key);
    const list = await client.callTool({ name: "primitive_list", arguments: {} });
    expect((structured(list).data as { name: string }[]).map((p) => p.name)).toEqual(["cache"]);
    await client.close();
    expect((await connect(scoped.key, "ops")).client).toBeDefined();
    for (const other of ["app", "nowhere"]) {
      const res = await initialize({ authorization: `Bearer ${scoped.key}`, "x-service-group": other });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string; message: string } }).error.code).toBe("group_mismatch");
    }
  });

  it("tools/list shows only the key's tools (primitive_list always); others answer tool_not_allowed", async () => {
    const narrow = await createKey(cloud.api.hub.pool, { workspace, group: "app", tools: ["kv_get"] });
    const { client } = await connect(narrow.key);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["kv_get", "primitive_list"]);
    const refused = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "x", value: 1 } });
    expect(refused.isError).toBe(true);
    expect(structured(refused)).toMatchObject({ error: { code: "tool_not_allowed" } });
    await client.close();
  });
});

describe("sessions", () => {
  it("belong to their credential: another key presenting the session id gets 404", async () => {
    const { client, transport } = await connect(key, "app");
    const sessionId = transport.sessionId as string;
    const other = await createKey(cloud.api.hub.pool, { workspace });
    const res = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${other.key}`,
        "x-service-group": "app",
        "mcp-session-id": sessionId,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string; message: string } }).error.code).toBe("not_found");
    expect((await client.listTools()).tools.length).toBeGreaterThan(10); // still the owner's
    await client.close();
  });
});
