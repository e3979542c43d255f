// The key tools on apps/mcp (issue 41, item 2): `key_mint`, `key_list`, `key_revoke` do what
// `POST/GET/DELETE /v1/keys` do (@prim/db's KeyManagement, shared with apps/api), for a `pk_` key
// whose allowlist grants them. Real api cell, apps/mcp, Postgres, Redis and the official SDK
// client (which checks each result against the tool's output schema). Each refusal is paired with
// the rightful caller succeeding on the same object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKey, createUser, createWorkspace, hashKey } from "@prim/db";
import { call, consentedToken, type OAuthStack, startOAuthStack, twoGroupWorkspace } from "@prim/testkit/cloud";
import { attenuate, KEY_TOOL_CATALOG, keyStart } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawInitialize } from "./raw.js";

let stack: OAuthStack;
let api: string;
let workspace: string;
let root: string;
let kvApp: string;
let kvOther: string;
const clients: Client[] = [];

type Result = { isError?: boolean; structuredContent?: Record<string, any>; content?: unknown };

async function connect(credential: string, group?: string): Promise<Client> {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (group !== undefined) headers["x-service-group"] = group;
  const client = new Client({ name: "key-tools", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const tool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as Result;

/** A tool's success: its structured result. */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}) {
  const res = await tool(client, name, args);
  expect(res.isError, JSON.stringify(res.structuredContent)).toBeFalsy();
  return res.structuredContent as Record<string, any>;
}

/** A tool's refusal: the spec's error object, as a tool error. */
async function refused(client: Client, name: string, args: Record<string, unknown> = {}) {
  const res = await tool(client, name, args);
  expect(res.isError, JSON.stringify(res.structuredContent)).toBe(true);
  return (res.structuredContent as { error: { code: string; message: string } }).error;
}

const initialize = async (key: string, group?: string) =>
  (
    await rawInitialize(stack.mcpUrl, {
      authorization: `Bearer ${key}`,
      ...(group === undefined ? {} : { "x-service-group": group }),
    })
  ).status;

beforeAll(async () => {
  stack = await startOAuthStack("mcp_key_tools");
  api = stack.cloud.url;
  ({ workspace, root, kvApp, kvOther } = await twoGroupWorkspace(api, stack.cloud.api.hub.pool, "Agents"));
}, 90_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await stack?.stop();
});

describe("the key tools in tools/list", () => {
  it("happy: a key whose allowlist grants them sees the three, typed and annotated", async () => {
    const { tools } = await (await connect(root, "app")).listTools();
    const keyTools = tools.filter((t) => t.name.startsWith("key_"));
    expect(keyTools.map((t) => t.name)).toEqual(KEY_TOOL_CATALOG.map((t) => t.name));
    const byName = Object.fromEntries(keyTools.map((t) => [t.name, t]));
    expect(byName.key_mint?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(byName.key_revoke?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(byName.key_list?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    for (const t of keyTools) {
      expect(t.outputSchema?.type, t.name).toBe("object");
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
    }
    expect(Object.keys(byName.key_mint?.inputSchema.properties ?? {}).sort()).toEqual(
      ["budget", "expires_at", "group", "ip_allow", "name", "read_only", "tools"].sort(),
    );
  });

  it("security: an allowlist without key_* neither lists nor calls them (tool_not_allowed); with key_* it mints", async () => {
    const kvOnly = await createKey(stack.cloud.api.hub.pool, { workspace, group: "app", tools: ["kv_*"] });
    const client = await connect(kvOnly.key);
    expect((await client.listTools()).tools.some((t) => t.name.startsWith("key_"))).toBe(false);
    expect((await refused(client, "key_mint", { name: "sub" })).code).toBe("tool_not_allowed");
    expect((await refused(client, "key_list")).code).toBe("tool_not_allowed");
    expect((await ok(client, "kv_get", { primitive: "cache", key: "k" })).value).toBe("app");
    const granted = await createKey(stack.cloud.api.hub.pool, { workspace, group: "app", tools: ["kv_*", "key_*"] });
    const minted = await ok(await connect(granted.key), "key_mint", { name: "sub" });
    expect(minted).toMatchObject({ tools: ["kv_*", "key_*"], group: "app", parent: granted.id });
  });
});

describe("minting over MCP", () => {
  it("an agent mints a narrower child, shown once; the child works within its scope and is refused outside", async () => {
    const orchestrator = await ok(await connect(root, "app"), "key_mint", {
      name: "orchestrator",
      group: "app",
      tools: ["kv_*", "key_*"],
    });
    expect(orchestrator).toMatchObject({ key: expect.stringMatching(/^pk_/), group: "app", read_only: false });
    const agent = await connect(orchestrator.key);
    const child = await ok(agent, "key_mint", { name: "reader", tools: ["kv_get"] });
    expect(child).toMatchObject({ name: "reader", group: "app", tools: ["kv_get"], parent: orchestrator.id });
    // Listed without the secret; the audit log names it by id and start only.
    const listed = await ok(agent, "key_list");
    expect(listed.data.map((k: { id: string }) => k.id)).toEqual([child.id]);
    expect(JSON.stringify(listed)).not.toContain(child.key);
    const audit = await stack.cloud.api.hub.pool.query(
      "SELECT actor, detail FROM audit WHERE workspace_id = $1 AND action = 'key.mint' AND target = $2",
      [workspace, child.id],
    );
    expect(audit.rows).toEqual([
      { actor: `key:${orchestrator.id}`, detail: expect.objectContaining({ start: keyStart(child.key) }) },
    ]);
    expect(JSON.stringify(audit.rows)).not.toContain(child.key);

    const sub = await connect(child.key);
    expect((await sub.listTools()).tools.map((t) => t.name).sort()).toEqual(["kv_get", "primitive_list"]);
    expect((await ok(sub, "kv_get", { primitive: "cache", key: "k" })).value).toBe("app");
    expect((await refused(sub, "kv_set", { primitive: "cache", key: "k", value: 1 })).code).toBe("tool_not_allowed");
    expect((await refused(sub, "key_mint", {})).code).toBe("tool_not_allowed");
    expect(await initialize(child.key, "other")).toBe(403);
    expect((await call(api, child.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).body.value).toBe("app");
    expect((await call(api, child.key, "GET", `/v1/primitives/${kvOther}/keys/k`)).status).toBe(404);
    // The parent does what the child may not.
    expect((await ok(agent, "kv_set", { primitive: "cache", key: "k2", value: 1 })).key).toBe("k2");
  });

  it("security: wider on each property is 403 forbidden naming it, as a tool error; narrower from the same parent succeeds", async () => {
    const expiresAt = Date.now() + 3_600_000;
    const parent = await createKey(stack.cloud.api.hub.pool, {
      workspace,
      group: "app",
      tools: ["kv_*", "key_*"],
      expiresAt,
      ipAllow: ["127.0.0.0/8", "::1/128"],
    });
    const client = await connect(parent.key);
    const wider: [Record<string, unknown>, string][] = [
      [{ group: "other" }, "group"],
      [{ group: null }, "group"],
      [{ tools: ["db_query"] }, "tools"],
      [{ tools: ["*"] }, "tools"],
      [{ expires_at: expiresAt + 60_000 }, "expires_at"],
      [{ ip_allow: ["10.0.0.0/8"] }, "ip_allow"],
      [{ ip_allow: ["0.0.0.0/0"] }, "ip_allow"],
    ];
    for (const [args, property] of wider) {
      const error = await refused(client, "key_mint", args);
      expect(error, JSON.stringify(args)).toEqual({ code: "forbidden", message: expect.stringContaining(property) });
    }
    const narrower = await ok(client, "key_mint", {
      group: "app",
      tools: ["kv_get"],
      read_only: true,
      expires_at: expiresAt - 60_000,
      ip_allow: ["127.0.0.1/32"],
    });
    expect(narrower).toMatchObject({
      group: "app",
      tools: ["kv_get"],
      read_only: true,
      expires_at: expiresAt - 60_000,
      ip_allow: ["127.0.0.1/32"],
      parent: parent.id,
    });
    // Omitted properties are the parent's; an argument the tool does not know is refused.
    expect(await ok(client, "key_mint", {})).toMatchObject({ tools: ["kv_*", "key_*"], expires_at: expiresAt });
    expect((await refused(client, "key_mint", { budget: { total: 5 }, color: "red" })).code).toBe("invalid_request");
    // A budget from a parent without one: the child's own, shown in the answer.
    expect(await ok(client, "key_mint", { budget: { per: "day", limit: 5 } })).toMatchObject({
      budget: { per: "day", limit: 5 },
    });
    expect((await refused(client, "key_mint", { expires_at: 1 })).code).toBe("invalid_request");
  });
});

describe("budgets over MCP", () => {
  it("a budgeted key's child takes its budget out of the parent's, as over REST; more than is left is refused", async () => {
    const parent = await createKey(stack.cloud.api.hub.pool, { workspace, group: "app", budget: { total: 10 } });
    const client = await connect(parent.key, "app");
    expect((await refused(client, "key_mint", {})).message).toContain("budget");
    expect(await ok(client, "key_mint", { budget: { total: 7 } })).toMatchObject({ budget: { total: 7 } });
    const over = await refused(client, "key_mint", { budget: { total: 4 } });
    expect(over).toMatchObject({ code: "forbidden", message: expect.stringContaining("3 operations left") });
    expect(await ok(client, "key_mint", { budget: { total: 3 } })).toMatchObject({ budget: { total: 3 } });
  });
});

describe("listing and revoking over MCP", () => {
  it("key_list shows only the caller's subtree; key_revoke outside it is not_found, the rightful caller revokes", async () => {
    const rootClient = await connect(root, "app");
    const a = await ok(rootClient, "key_mint", { name: "a" });
    const sibling = await ok(rootClient, "key_mint", { name: "sibling" });
    const aClient = await connect(a.key, "app");
    const a1 = await ok(aClient, "key_mint", { name: "a1" });
    const a11 = await ok(await connect(a1.key, "app"), "key_mint", { name: "a11" });
    const listed = (await ok(aClient, "key_list")).data;
    expect(listed.map((k: { id: string }) => k.id)).toEqual([a1.id, a11.id]);
    expect(listed[1]).toMatchObject({ parent: a1.id, depth: 3, start: keyStart(a11.key), revoked_at: null });
    // What REST answers, exactly.
    expect((await call(api, a.key, "GET", "/v1/keys")).body).toEqual({ data: listed });
    const stranger = await createWorkspace(stack.cloud.api.hub.pool, { name: "Stranger" });
    for (const id of [sibling.id, a.parent, a.id, stranger.key_id, "key_nope"]) {
      expect(await refused(aClient, "key_revoke", { id }), id).toMatchObject({ code: "not_found" });
    }
    expect((await call(api, sibling.key, "GET", "/v1/keys")).status).toBe(200);
    expect(await ok(rootClient, "key_revoke", { id: sibling.id })).toMatchObject({
      id: sibling.id,
      revoked: [sibling.id],
      revoked_at: expect.any(Number),
    });
  });

  it("key_revoke of a child: its next MCP call and REST call are 401 invalid_token at once, the parent goes on", async () => {
    const parent = await ok(await connect(root, "app"), "key_mint", { name: "parent", group: "app" });
    const parentClient = await connect(parent.key);
    const child = await ok(parentClient, "key_mint", { name: "child", tools: ["kv_get", "key_*"] });
    const grandchild = await ok(await connect(child.key), "key_mint", { name: "grandchild" });
    // Cached everywhere first: a session open over MCP, the key known to the api process.
    const childClient = await connect(child.key);
    expect((await ok(childClient, "kv_get", { primitive: "cache", key: "k" })).value).toBe("app");
    expect((await call(api, child.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(200);
    expect((await call(api, grandchild.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(200);

    // The api process hears the fan-out (its own resolver, as a second process would).
    const wanted = new Set([hashKey(child.key), hashKey(grandchild.key)]);
    const heard = new Promise<void>((resolve) => {
      const resolver = stack.cloud.api.resolver;
      const forget = resolver.forget.bind(resolver);
      const seen = new Set<string>();
      resolver.forget = (hash: string) => {
        forget(hash);
        if (wanted.has(hash)) seen.add(hash);
        if (seen.size === wanted.size) resolve();
      };
    });
    const revoked = await ok(parentClient, "key_revoke", { id: child.id });
    expect(revoked).toMatchObject({ id: child.id, revoked: [child.id, grandchild.id] });
    // apps/mcp itself: the very next request.
    await expect(childClient.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "k" } })).rejects.toThrow(
      /401|invalid_token/,
    );
    expect(await initialize(child.key)).toBe(401);
    expect(await initialize(grandchild.key)).toBe(401);
    await heard;
    const rest = await call(api, child.key, "GET", `/v1/primitives/${kvApp}/keys/k`);
    expect({ status: rest.status, code: rest.body.error?.code }).toEqual({ status: 401, code: "invalid_token" });
    expect((await call(api, grandchild.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(401);
    // The parent goes on, and lists its revoked children as such; repeating the revocation is harmless.
    expect((await ok(parentClient, "kv_get", { primitive: "cache", key: "k" })).value).toBe("app");
    const listed = (await ok(parentClient, "key_list")).data;
    expect(listed.every((k: { revoked_at: number | null }) => typeof k.revoked_at === "number")).toBe(true);
    expect(await ok(parentClient, "key_revoke", { id: child.id })).toMatchObject({ id: child.id, revoked: [] });
    const audit = await stack.cloud.api.hub.pool.query(
      "SELECT actor FROM audit WHERE workspace_id = $1 AND action = 'key.revoke' AND target = $2",
      [workspace, child.id],
    );
    expect(audit.rows).toEqual([{ actor: `key:${parent.id}` }]);
  });
});

describe("credentials that may not manage keys", () => {
  it("a read-only key lists but is refused key_mint and key_revoke (403 forbidden); its writable parent mints and revokes", async () => {
    const writer = await connect(root, "app");
    const reader = await ok(writer, "key_mint", { name: "reader", group: "app", read_only: true });
    const client = await connect(reader.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["key_mint", "key_list", "key_revoke"]),
    );
    for (const args of [{}, { read_only: true }]) {
      const error = await refused(client, "key_mint", args);
      expect(error).toEqual({ code: "forbidden", message: expect.stringContaining("read-only") });
    }
    expect(await refused(client, "key_revoke", { id: reader.id })).toMatchObject({ code: "forbidden" });
    expect(await ok(client, "key_list")).toEqual({ data: [] });
    // REST answers the same, with the same message.
    const rest = await call(api, reader.key, "POST", "/v1/keys", { read_only: true });
    expect(rest.status).toBe(403);
    expect(rest.body.error).toEqual(await refused(client, "key_mint", { read_only: true }));
    // The rightful caller on the same objects.
    expect(await ok(writer, "key_mint", { group: "app", read_only: true })).toMatchObject({ read_only: true });
    expect(await ok(writer, "key_revoke", { id: reader.id })).toMatchObject({ revoked: [reader.id] });
  });

  it("a pa_ token is refused (403 forbidden, REST's message); the key itself mints", async () => {
    const key = await createKey(stack.cloud.api.hub.pool, { workspace, group: "app", tools: ["kv_*", "key_*"] });
    const token = await attenuate(key.key, [{ type: "expires", at: Date.now() + 3_600_000 }]);
    const client = await connect(token);
    const error = await refused(client, "key_mint", { name: "child" });
    expect(error).toEqual({ code: "forbidden", message: expect.stringContaining("attenuated") });
    expect(await refused(client, "key_list")).toMatchObject({ code: "forbidden" });
    expect((await call(api, token, "POST", "/v1/keys", { name: "child" })).body.error).toEqual(error);
    expect((await ok(client, "kv_get", { primitive: "cache", key: "k" })).value).toBe("app");
    expect(await ok(await connect(key.key), "key_mint", { name: "child" })).toMatchObject({ parent: key.id });
  });

  it("an OAuth token is refused key_mint (403 forbidden) while its other tools work", async () => {
    const alice = await createUser(stack.cloud.api.hub.pool, {
      email: "alice@key-tools.test",
      password: "correct horse 1",
      workspace,
    });
    const fields = { workspace, group: "app", everyTool: true, action: "allow" } as const;
    const client = await connect(await consentedToken(stack, alice.id, fields, "Minting Agent"));
    const error = await refused(client, "key_mint", { name: "child" });
    expect(error).toEqual({ code: "forbidden", message: "only an API key can manage minted keys" });
    expect(await refused(client, "key_list")).toEqual(error);
    expect(await refused(client, "key_revoke", { id: "key_00000000000000000000000000" })).toEqual(error);
    expect((await ok(client, "kv_get", { primitive: "cache", key: "k" })).value).toBe("app");
    expect((await ok(client, "kv_set", { primitive: "cache", key: "oauth", value: 1 })).key).toBe("oauth");
  });
});

describe("limits", () => {
  it("key tools are rate-limited per key like any request, and count as no operation", async () => {
    const pool = stack.cloud.api.hub.pool;
    const slow = await createWorkspace(pool, { name: "Slow", plan: "enterprise", rps: 1, burst: 3 });
    expect((await call(api, slow.key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
    const fresh = await createKey(pool, { workspace: slow.workspace.id, group: "app" });
    const client = await connect(fresh.key);
    const before = await stack.cloud.api.limiter?.operations(slow.workspace.id);
    const answers = await Promise.all(Array.from({ length: 12 }, () => tool(client, "key_list")));
    const limited = answers.filter((a) => a.isError === true);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]?.structuredContent?.error.code).toBe("rate_limited");
    expect(answers.filter((a) => a.isError !== true).length).toBeGreaterThan(0);
    expect(await stack.cloud.api.limiter?.operations(slow.workspace.id)).toEqual(before);
    // Another key of the workspace has its own bucket.
    expect((await call(api, slow.key, "GET", "/v1/keys")).status).toBe(200);
  });
});
