// Minted keys (issue 41, item 2): any `pk_` key mints children at most as wide as itself over
// `POST /v1/keys`, lists its subtree and revokes any key of it with everything under it, in
// every process (a second api process and apps/mcp) before their next request. Each refusal is
// paired with the same caller succeeding on something narrower, or the rightful caller on the
// same object.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKey, createUser, createWorkspace, hashKey } from "@prim/db";
import { runPrimCommand } from "@prim/testkit";
import { call, consentedToken, type OAuthStack, startOAuthStack, twoGroupWorkspace } from "@prim/testkit/cloud";
import { keyStart } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let stack: OAuthStack;
let url: string;
let workspace: string;
let root: string;
let kvApp: string;
let kvOther: string;
const clients: Client[] = [];

const mint = (key: string, body: Record<string, unknown>) => call(url, key, "POST", "/v1/keys", body);

async function mcp(key: string): Promise<Client> {
  const client = new Client({ name: "minted", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A raw MCP initialize with `key` (its status: 200 or the refusal). */
async function mcpInitialize(key: string, group?: string): Promise<number> {
  const res = await fetch(stack.mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(group === undefined ? {} : { "x-service-group": group }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  stack = await startOAuthStack("api_minted_keys");
  url = stack.cloud.url;
  ({ workspace, root, kvApp, kvOther } = await twoGroupWorkspace(url, stack.cloud.api.hub.pool, "Agents"));
}, 90_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await stack?.stop();
});

describe("minting", () => {
  it("happy: a workspace key mints a one-group child, shown once, named by id and start in the audit log", async () => {
    const res = await mint(root, { name: "orchestrator", group: "app", tools: ["kv_*", "primitive_create"] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^pk_/),
      name: "orchestrator",
      group: "app",
      tools: ["kv_*", "primitive_create"],
      read_only: false,
      parent: expect.stringMatching(/^key_/),
      created_at: expect.any(Number),
    });
    const audit = await stack.cloud.api.hub.pool.query(
      "SELECT actor, target, detail FROM audit WHERE workspace_id = $1 AND action = 'key.mint'",
      [workspace],
    );
    expect(audit.rows).toEqual([
      {
        actor: `key:${res.body.parent}`,
        target: res.body.id,
        detail: expect.objectContaining({ start: keyStart(res.body.key), parent: res.body.parent }),
      },
    ]);
    expect(JSON.stringify(audit.rows)).not.toContain(res.body.key);
  });

  it("security: wider on group, tools or depth, or a read-only caller, is 403 forbidden naming it; narrower from the same parent succeeds", async () => {
    const mid = (await mint(root, { group: "app", tools: ["kv_*", "key_*"] })).body;
    const refused = async (body: Record<string, unknown>, property: string, parent = mid.key) => {
      const res = await mint(parent, body);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: "forbidden", message: expect.stringContaining(property) });
    };
    await refused({ group: "other" }, "group");
    await refused({ group: null }, "group");
    await refused({ tools: ["db_query"] }, "tools");
    await refused({ tools: ["*"] }, "tools");
    await refused({ tools: ["k*"] }, "tools");
    const narrower = await mint(mid.key, { group: "app", tools: ["kv_get", "kv_l*", "key_list"], read_only: true });
    expect(narrower.status).toBe(201);
    expect(narrower.body).toMatchObject({
      group: "app",
      tools: ["kv_get", "kv_l*", "key_list"],
      read_only: true,
      parent: mid.id,
    });
    // Omitted properties inherit the parent's.
    expect((await mint(mid.key, {})).body).toMatchObject({ group: "app", tools: ["kv_*", "key_*"], read_only: false });
    // The allowlist holds for key management as for data: a key without key_mint mints nothing.
    const kvOnly = (await mint(mid.key, { tools: ["kv_*"] })).body;
    const noTool = await mint(kvOnly.key, {});
    expect(noTool.status).toBe(403);
    expect(noTool.body.error).toMatchObject({ code: "tool_not_allowed", message: expect.stringContaining("key_mint") });
    expect((await call(url, kvOnly.key, "GET", "/v1/keys")).body.error.code).toBe("tool_not_allowed");

    // Read-only changes nothing, keys included (REST and MCP alike): a read-only key mints no
    // child, not even a read-only one, and revokes nothing; it lists. Its writable parent mints.
    await refused({ read_only: false }, "read-only", narrower.body.key);
    await refused({ read_only: true }, "read-only", narrower.body.key);
    await refused({}, "read-only", narrower.body.key);
    const readerRevokes = await call(url, narrower.body.key, "DELETE", `/v1/keys/${narrower.body.id}`);
    expect(readerRevokes.body.error).toMatchObject({
      code: "forbidden",
      message: expect.stringContaining("read-only"),
    });
    expect((await call(url, narrower.body.key, "GET", "/v1/keys")).body).toEqual({ data: [] });
    expect((await mint(mid.key, { read_only: true })).body).toMatchObject({
      read_only: true,
      tools: ["kv_*", "key_*"],
    });

    // Depth: root is 0, mid 1; keys nest to 8, and a depth-8 key mints nothing.
    let parent = mid.key;
    for (let depth = 2; depth <= 8; depth++) {
      const child = await mint(parent, { name: `depth-${depth}` });
      expect(child.status).toBe(201);
      parent = child.body.key;
    }
    await refused({}, "depth", parent);
    // A malformed body or a property this server does not know is 400, never silently dropped.
    expect((await mint(mid.key, { expires_at: 1 })).body.error.code).toBe("invalid_request");
    expect((await mint(mid.key, { tools: ["KV!"] })).body.error.code).toBe("invalid_request");
    // A group that does not exist, from an every-group parent: 404.
    expect((await mint(root, { group: "nope" })).status).toBe(404);
  });

  it("a child keeps its parent's expiry and IP allowlist or asks for less, never more; a key with a budget mints only budgeted children", async () => {
    const pool = stack.cloud.api.hub.pool;
    const expiresAt = Date.now() + 3_600_000;
    const limited = await createKey(pool, { workspace, group: "app", expiresAt, ipAllow: ["127.0.0.0/8", "::1/128"] });
    const child = await mint(limited.key, { name: "sub" });
    expect(child.status, JSON.stringify(child.body)).toBe(201);
    const row = await pool.query("SELECT expires_at, ip_allow FROM api_keys WHERE id = $1", [child.body.id]);
    expect(row.rows[0]).toEqual({ expires_at: new Date(expiresAt), ip_allow: ["127.0.0.0/8", "::1/128"] });
    expect((await call(url, child.body.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(200);
    // Asking for more than the parent's is refused naming the property; less is granted.
    const later = await mint(limited.key, { expires_at: expiresAt + 60_000 });
    expect(later.status).toBe(403);
    expect(later.body.error.message).toContain("expires_at");
    const outside = await mint(limited.key, { ip_allow: ["10.0.0.0/8"] });
    expect(outside.status).toBe(403);
    expect(outside.body.error.message).toContain("ip_allow");
    const wide = await mint(limited.key, { ip_allow: ["0.0.0.0/0"] });
    expect(wide.status).toBe(403);
    const sooner = await mint(limited.key, { expires_at: expiresAt - 60_000, ip_allow: ["127.0.0.1/32"] });
    expect(sooner.status, JSON.stringify(sooner.body)).toBe(201);
    expect(sooner.body).toMatchObject({ expires_at: expiresAt - 60_000, ip_allow: ["127.0.0.1/32"] });
    expect((await call(url, sooner.body.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(200);
    // From a parent without limits, a child may take any: one outside this address is refused.
    const free = (await createKey(pool, { workspace, group: "app" })).key;
    const walled = await mint(free, { ip_allow: ["10.0.0.0/8"] });
    expect(walled.status).toBe(201);
    expect((await call(url, walled.body.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(403);
    const budgeted = await createKey(pool, { workspace, group: "app", budget: { total: 1000 } });
    const refused = await mint(budgeted.key, { name: "sub" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("budget") });
    const carved = await mint(budgeted.key, { name: "sub", budget: { total: 10 } });
    expect(carved.status, JSON.stringify(carved.body)).toBe(201);
    expect(carved.body.budget).toEqual({ total: 10 });
  });

  it("a child works within its scope over REST and MCP, and is refused outside", async () => {
    const mid = (await mint(root, { group: "app", tools: ["kv_*", "key_*"] })).body;
    const child = (await mint(mid.key, { tools: ["kv_get"] })).body;
    expect((await call(url, child.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).body).toMatchObject({ value: "app" });
    expect((await call(url, child.key, "GET", `/v1/primitives/${kvOther}/keys/k`)).status).toBe(404);
    const write = await call(url, child.key, "PUT", `/v1/primitives/${kvApp}/keys/k`, { value: "x" });
    expect(write.body.error.code).toBe("tool_not_allowed");
    expect((await call(url, mid.key, "PUT", `/v1/primitives/${kvApp}/keys/k2`, { value: "x" })).status).toBe(200);

    const client = await mcp(child.key);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["kv_get", "primitive_list"]);
    const got = await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "k" } });
    expect(got.isError).toBeFalsy();
    expect(JSON.stringify(got.content)).toContain("app");
    const set = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: "k", value: 1 } });
    expect(set.isError).toBe(true);
    expect(JSON.stringify(set)).toContain("tool_not_allowed");
    expect(await mcpInitialize(child.key, "other")).toBe(403); // group_mismatch
    expect(await mcpInitialize(child.key, "app")).toBe(200);

    // A read-only child of an every-tool key: reads, never writes.
    const reader = (await mint(root, { group: "app", read_only: true })).body;
    expect((await call(url, reader.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(200);
    expect((await call(url, reader.key, "PUT", `/v1/primitives/${kvApp}/keys/k`, { value: 1 })).body.error.code).toBe(
      "forbidden",
    );
  });
});

describe("listing and revoking", () => {
  it("a key lists only its subtree and revokes only within it; others' keys are 404", async () => {
    const a = (await mint(root, { name: "a" })).body;
    const sibling = (await mint(root, { name: "sibling" })).body;
    const a1 = (await mint(a.key, { name: "a1" })).body;
    const a11 = (await mint(a1.key, { name: "a11" })).body;
    const listed = await call(url, a.key, "GET", "/v1/keys");
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([a1.id, a11.id]);
    expect(listed.body.data[1]).toMatchObject({
      parent: a1.id,
      depth: 3,
      start: keyStart(a11.key),
      revoked_at: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain(a11.key);
    expect((await call(url, a11.key, "GET", "/v1/keys")).body.data).toEqual([]);
    const fromRoot = (await call(url, root, "GET", "/v1/keys")).body.data.map((k: { id: string }) => k.id);
    expect(fromRoot).toEqual(expect.arrayContaining([a.id, sibling.id, a1.id, a11.id]));

    // Outside a's subtree: a sibling, a's parent, a itself, another workspace's key, nonsense.
    const rootId = a.parent;
    const stranger = await createWorkspace(stack.cloud.api.hub.pool, { name: "Stranger" });
    for (const id of [sibling.id, rootId, a.id, stranger.key_id, "key_nope"]) {
      const res = await call(url, a.key, "DELETE", `/v1/keys/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await call(url, sibling.key, "GET", "/v1/keys")).status).toBe(200); // untouched
    // The rightful caller on the same key.
    const revoked = await call(url, root, "DELETE", `/v1/keys/${sibling.id}`);
    expect(revoked).toMatchObject({ status: 200, body: { id: sibling.id, revoked: [sibling.id] } });
    expect((await call(url, sibling.key, "GET", "/v1/keys")).status).toBe(401);
  });

  it("revoking a middle key revokes its subtree at once: in a second api process and in apps/mcp", async () => {
    const top = (await mint(root, { name: "top", group: "app" })).body;
    const middle = (await mint(top.key, { name: "middle" })).body;
    const leaf = (await mint(middle.key, { name: "leaf", tools: ["kv_get"] })).body;
    const other = await stack.cloud.second();
    // Cached everywhere first.
    for (const base of [url, other.url]) {
      expect((await call(base, leaf.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(200);
      expect((await call(base, middle.key, "GET", "/v1/keys")).status).toBe(200);
    }
    const client = await mcp(leaf.key);
    expect(
      (await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "k" } })).isError,
    ).toBeFalsy();
    expect(await mcpInitialize(middle.key)).toBe(200);

    const wanted = new Set([hashKey(middle.key), hashKey(leaf.key)]);
    const heardBy = (resolver: { forget(hash: string): void }) => {
      const seen = new Set<string>();
      return new Promise<void>((resolve) => {
        const forget = resolver.forget.bind(resolver);
        resolver.forget = (hash) => {
          forget(hash);
          if (wanted.has(hash)) seen.add(hash);
          if (seen.size === wanted.size) resolve();
        };
      });
    };
    const heard = Promise.all([heardBy(other.api.resolver), heardBy(stack.mcp.resolver)]);
    const res = await call(url, top.key, "DELETE", `/v1/keys/${middle.id}`);
    expect(res.status).toBe(200);
    expect(res.body.revoked).toEqual([middle.id, leaf.id]);
    // This process: the very next request.
    expect((await call(url, leaf.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(401);
    await heard;
    expect((await call(other.url, leaf.key, "GET", `/v1/primitives/${kvApp}/keys/k`)).status).toBe(401);
    expect((await call(other.url, middle.key, "GET", "/v1/keys")).status).toBe(401);
    expect(await mcpInitialize(leaf.key)).toBe(401);
    expect(await mcpInitialize(middle.key)).toBe(401);
    await expect(client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "k" } })).rejects.toThrow();
    // The parent is untouched, and lists its revoked children as such.
    const listed = (await call(other.url, top.key, "GET", "/v1/keys")).body.data;
    expect(listed.every((k: { revoked_at: number | null }) => typeof k.revoked_at === "number")).toBe(true);
    expect(await mcpInitialize(top.key)).toBe(200);
    // Recorded once per key, the subtree's entries naming the revoked root.
    const audit = await stack.cloud.api.hub.pool.query(
      "SELECT target, detail FROM audit WHERE workspace_id = $1 AND action = 'key.revoke' AND target = ANY($2)",
      [workspace, [middle.id, leaf.id]],
    );
    expect(audit.rows).toHaveLength(2);
    expect(audit.rows.find((r) => r.target === leaf.id)?.detail).toEqual({
      start: keyStart(leaf.key),
      via: middle.id,
    });
    // A revoked key mints nothing.
    expect((await mint(middle.key, {})).status).toBe(401);
  });
});

describe("limits", () => {
  it("key management is rate-limited per key like any request, and counts as no operation", async () => {
    const pool = stack.cloud.api.hub.pool;
    const slow = await createWorkspace(pool, { name: "Slow", plan: "enterprise", rps: 1, burst: 3 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => call(url, slow.key, "GET", "/v1/keys")));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]?.body.error.code).toBe("rate_limited");
    expect(limited[0]?.headers.get("retry-after")).toMatch(/^\d+$/);
    // Another key of the same workspace has its own bucket.
    const other = await mint(root, {});
    expect(other.status).toBe(201);
    // The workspace's live operation counter (Redis) is untouched.
    expect(await stack.cloud.api.limiter?.operations(slow.workspace.id)).toEqual({ month: 0, day: 0 });
  });
});

describe("OAuth tokens", () => {
  it("cannot mint (REST is for keys only), while the same token works on MCP", async () => {
    const alice = await createUser(stack.cloud.api.hub.pool, {
      email: "alice@minted.test",
      password: "correct horse 1",
      workspace,
    });
    const fields = { workspace, group: "app", everyTool: true, action: "allow" } as const;
    const token = await consentedToken(stack, alice.id, fields, "Minting Agent");
    expect(await mcpInitialize(token)).toBe(200);
    const res = await mint(token, { group: "app" });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("invalid_token");
    expect((await call(url, token, "GET", "/v1/keys")).status).toBe(401);
  });
});

describe("prim key", () => {
  it("mints, lists and revokes with the key in PRIM_API_KEY; a wider mint fails naming the property, without the key", async () => {
    const config = mkdtempSync(join(tmpdir(), "prim-key-"));
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PRIM_")));
    const prim = (key: string, ...args: string[]) =>
      runPrimCommand(["key", ...args, "--api", url], { ...clean, PRIM_CONFIG_DIR: config, PRIM_API_KEY: key });
    try {
      const parent = (await mint(root, { group: "app", tools: ["kv_*", "key_*"] })).body;
      const minted = await prim(
        parent.key,
        "mint",
        "--tools",
        "kv_get,kv_list",
        "--read-only",
        "--name",
        "cli",
        "--json",
      );
      expect(minted).toMatchObject({ code: 0, stderr: "" });
      const child = JSON.parse(minted.stdout);
      expect(child).toMatchObject({
        name: "cli",
        group: "app",
        tools: ["kv_get", "kv_list"],
        read_only: true,
        parent: parent.id,
      });
      const limited = await prim(
        parent.key,
        "mint",
        "--expires-in",
        "1h",
        "--ip-allow",
        "127.0.0.0/8, ::1/128",
        "--json",
      );
      expect(limited).toMatchObject({ code: 0, stderr: "" });
      const bounded = JSON.parse(limited.stdout);
      expect(bounded.ip_allow).toEqual(["127.0.0.0/8", "::1/128"]);
      expect(bounded.expires_at).toBeGreaterThan(Date.now() + 3_500_000);
      expect(bounded.expires_at).toBeLessThanOrEqual(Date.now() + 3_600_000);
      const text = await prim(parent.key, "mint", "--name", "plain");
      expect(text.stdout).toMatch(
        /^minted key_\w+ \(group app, tools kv_\*,key_\*; parent key_\w+\); the key, shown once:\npk_\w+\n$/,
      );
      const wider = await prim(bounded.key, "mint", "--tools", "db_query");
      expect(wider.code).not.toBe(0);
      expect(wider.stderr).toContain("403 forbidden: tools");
      expect(wider.stderr).not.toContain(bounded.key);
      const listed = await prim(parent.key, "list");
      expect(listed.stdout).toContain(
        `${child.id}  ${keyStart(child.key)}…  cli  group app, tools kv_get,kv_list, read-only`,
      );
      const revoked = await prim(parent.key, "revoke", child.id);
      expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${child.id}\n` });
      expect((await call(url, child.key, "GET", "/v1/keys")).status).toBe(401);
      expect((await prim(parent.key, "revoke", "key_nope")).stderr).toContain("404 not_found");
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
  });
});
