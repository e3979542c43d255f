// The official MCP SDK client's OAuth flow end to end against apps/mcp and apps/api's
// authorization server (real processes' code, Postgres, Redis): 401 → resource metadata →
// authorization server metadata → registration (dynamic, and a Client ID Metadata Document) →
// authorize → consent submitted as the dashboard's form is → token → tools/list shows exactly
// the consented tools → a call works → refresh rotates → the old refresh token is refused (and
// the grant with it) → disconnect and member removal end access on the next request.
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createUser, createWorkspace, disconnect, listConnections, removeMember } from "@prim/db";
import {
  Browser,
  call,
  consent,
  MemoryProvider,
  type OAuthStack,
  REDIRECT,
  startOAuthStack,
} from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawInitialize } from "./raw.js";

let stack: OAuthStack;
let workspace: string;
let user: string;
let browser: Browser;

beforeAll(async () => {
  stack = await startOAuthStack("oauthflow");
  const pool = stack.cloud.api.hub.pool;
  const ws = await createWorkspace(pool, { name: "Acme", plan: "pro" });
  workspace = ws.workspace.id;
  user = (await createUser(pool, { email: "alice@acme.test", password: "correct horse 1", workspace })).id;
  for (const group of ["app", "ops"]) await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: group });
  await call(stack.cloud.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
  const id = (await call(stack.cloud.url, ws.key, "GET", "/v1/primitives?group=app")).body.data[0].id;
  await call(stack.cloud.url, ws.key, "PUT", `/v1/primitives/${id}/keys/greeting`, { value: "hello" });
  browser = new Browser({ [new URL(stack.dashboard).host]: { user } });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** An `initialize` with a raw Bearer token: the status says whether the token still works. */
const initializeWith = (token: string) => rawInitialize(stack.mcpUrl, { authorization: `Bearer ${token}` });

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;

/** The agent: discovery, registration and the authorization request, then the code exchanged. */
async function connectAgent(provider: MemoryProvider, tools: string[], group = "app") {
  expect(await auth(provider, { serverUrl: stack.mcpUrl })).toBe("REDIRECT");
  const authorizationUrl = provider.authorizationUrl as URL;
  expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorizationUrl.searchParams.get("resource")).toBe(stack.mcpUrl);
  const back = await consent(stack, browser, authorizationUrl, { workspace, group, tools, action: "allow" });
  if (!(back instanceof URL)) throw new Error(`consent stopped: ${back.status} ${await back.text()}`);
  // RFC 9207: the authorization response names its issuer.
  expect(back.searchParams.get("iss")).toBe(stack.issuer);
  const code = back.searchParams.get("code") as string;
  expect(await auth(provider, { serverUrl: stack.mcpUrl, authorizationCode: code })).toBe("AUTHORIZED");
  return provider.saved as NonNullable<MemoryProvider["saved"]>;
}

async function mcpClient(provider: MemoryProvider) {
  const client = new Client({ name: "agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider }));
  return client;
}

async function refreshWith(clientId: string, refreshToken: string) {
  const res = await fetch(`${stack.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: clientId,
      resource: stack.mcpUrl,
    }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("OAuth for MCP with the SDK client", () => {
  it("dynamic registration → consent → po_/pr_ tokens → exactly the consented tools → disconnect ends access", async () => {
    const unauth = await fetch(stack.mcpUrl, { method: "POST" });
    expect(unauth.status).toBe(401);
    const provider = new MemoryProvider();
    const tokens = await connectAgent(provider, ["kv_get"]);
    expect(provider.client?.client_id).toMatch(/^[A-Za-z0-9_-]+$/); // registered dynamically
    // The access token carries its workspace's tag (the edge routes by it), the refresh token none.
    expect(tokens.access_token).toMatch(/^po_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    expect(tokens.access_token.slice(3, 29)).toBe(workspace.slice(3));
    expect(tokens.refresh_token).toMatch(/^pr_[A-Za-z0-9_-]{43}$/);
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");

    const client = await mcpClient(provider);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["kv_get", "primitive_list"]);
    const got = await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "greeting" } });
    expect(structured(got)).toMatchObject({ key: "greeting", value: "hello" });
    const refused = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "x", value: 1 } });
    expect(structured(refused)).toMatchObject({ error: { code: "tool_not_allowed" } });
    await client.close();

    // Not on REST.
    const rest = await call(stack.cloud.url, tokens.access_token, "GET", "/v1/primitives");
    expect(rest.status).toBe(401);
    expect(rest.body.error.code).toBe("invalid_token");

    const pool = stack.cloud.api.hub.pool;
    const listed = await listConnections(pool, workspace);
    const mine = listed.find((c) => c.client_id === provider.client?.client_id);
    expect(mine).toMatchObject({ client_name: "Test Agent", user_id: user, group: "app", tools: ["kv_get"] });
    expect((await initializeWith(tokens.access_token)).status).toBe(200); // cached by apps/mcp now
    await disconnect(pool, { workspace, id: mine?.id as string }, (m) => stack.cloud.api.revocations.publish(m));
    const after = await initializeWith(tokens.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await refreshWith(provider.client?.client_id as string, tokens.refresh_token as string)).status).toBe(400);
  });

  it("a Client ID Metadata Document as client_id; refresh rotates; reusing the old refresh token revokes the grant", async () => {
    const clientId = "https://agent.example.com/oauth/client.json";
    stack.documents.set(clientId, {
      client_id: clientId,
      client_name: "Doc Agent",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const provider = new MemoryProvider(clientId, "Doc Agent");
    const first = await connectAgent(provider, ["kv_*"]);
    expect(provider.client?.client_id).toBe(clientId);
    const connections = await listConnections(stack.cloud.api.hub.pool, workspace);
    expect(connections.find((c) => c.client_id === clientId)).toMatchObject({
      client_name: "Doc Agent",
      tools: ["kv_*"],
    });

    // The SDK refreshes when it holds a refresh token: a new pair, the old refresh token spent.
    expect(await auth(provider, { serverUrl: stack.mcpUrl })).toBe("AUTHORIZED");
    const second = provider.saved as NonNullable<MemoryProvider["saved"]>;
    expect(second.refresh_token).toMatch(/^pr_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    const client = await mcpClient(provider);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("kv_set");
    await client.close();

    const reused = await refreshWith(clientId, first.refresh_token as string);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    // Reuse is theft until shown otherwise: the whole grant is gone, at once.
    expect((await initializeWith(second.access_token)).status).toBe(401);
    expect((await refreshWith(clientId, second.refresh_token as string)).status).toBe(400);
  });

  it("a user leaving the workspace ends the connections they made there", async () => {
    const pool = stack.cloud.api.hub.pool;
    const bob = (await createUser(pool, { email: "bob@acme.test", password: "correct horse 2", workspace })).id;
    const bobBrowser = new Browser({ [new URL(stack.dashboard).host]: { user: bob } });
    const provider = new MemoryProvider();
    expect(await auth(provider, { serverUrl: stack.mcpUrl })).toBe("REDIRECT");
    const back = await consent(stack, bobBrowser, provider.authorizationUrl as URL, {
      workspace,
      group: "ops",
      tools: ["kv_get"],
      action: "allow",
    });
    const code = (back as URL).searchParams.get("code") as string;
    await auth(provider, { serverUrl: stack.mcpUrl, authorizationCode: code });
    const token = provider.saved?.access_token as string;
    expect((await initializeWith(token)).status).toBe(200);
    expect(await removeMember(pool, { workspace, user: bob }, (m) => stack.cloud.api.revocations.publish(m))).toEqual({
      connections: 1,
    });
    expect((await initializeWith(token)).status).toBe(401);
  });
});
