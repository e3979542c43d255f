// Read-only credentials on MCP, generated from the tool catalog (issue 40, item 3: read-only is
// decided in `engine.invoke` from each operation's declaration, not by hiding tools): a read-only
// workspace key and a read-only OAuth token (consented to every tool with the screen's
// "Read-only" box) see every tool; each action that writes for its arguments answers the tool
// error `forbidden` and changes nothing (the group's REST reads answer the same before and
// after), then the workspace's own key makes the same call on the same fresh objects and
// succeeds; each action that reads succeeds. db_query with a writing statement, db_exec with
// only SELECTs and a batch holding one INSERT, by name.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createKey, createUser, createWorkspace, listConnections } from "@prim/db";
import { type AnyOperation, accessOf, OPERATIONS } from "@prim/engine";
import { KEY_TOOLS, TOOLS } from "@prim/mcp";
import {
  call,
  consentedToken,
  type OAuthStack,
  readState,
  type Seeded,
  seed,
  startOAuthStack,
} from "@prim/testkit/cloud";
import type { PrimitiveType } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawInitialize } from "./raw.js";
import { type CallTool, type Objects, refusalOf, samplesOf, type ToolResult, VAULT_HOST } from "./tool-samples.js";

const OPS = new Map<string, AnyOperation>(OPERATIONS.map((op) => [op.name, op]));

let stack: OAuthStack;
let workspace: string;
let accountKey: string;
let own: Seeded;
let readOnlyKey: string;
let readOnlyToken: string;
const clients: Client[] = [];
const sessions: Record<"owner" | "key" | "token", CallTool> = {} as never;
const listed: Record<"key" | "token", string[]> = {} as never;

async function session(credential: string, group?: string): Promise<{ call: CallTool; tools: string[] }> {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (group !== undefined) headers["x-service-group"] = group;
  const client = new Client({ name: "read-only", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { requestInit: { headers } }));
  clients.push(client);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  return { call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult, tools };
}

/** An access token of `user`'s, consented to every tool on group `ro`, read-only. */
function readOnlyAccessToken(user: string): Promise<string> {
  return consentedToken(
    stack,
    user,
    { workspace, group: "ro", everyTool: true, readOnly: true, action: "allow" },
    "Reader Agent",
  );
}

beforeAll(async () => {
  stack = await startOAuthStack("mcp_read_only");
  const pool = stack.cloud.api.hub.pool;
  // Limits are on; an Enterprise rate no sweep reaches (the sweep is not about rates).
  const made = await createWorkspace(pool, { name: "RO", plan: "enterprise", rps: 100_000, burst: 100_000 });
  workspace = made.workspace.id;
  accountKey = made.key;
  own = await seed(stack.cloud.url, accountKey, "ro");
  const grant = { name: "SECRET", allow: { hosts: [VAULT_HOST] } };
  const granted = await call(stack.cloud.url, accountKey, "POST", `/v1/primitives/${own.ids.vault}/grants`, grant);
  expect(granted.status).toBeLessThan(300);
  // Every group and every tool: what refuses a write here is read-only alone.
  readOnlyKey = (await createKey(pool, { workspace, readOnly: true })).key;
  const alice = await createUser(pool, { email: "alice@ro.test", password: "correct horse 1", workspace });
  readOnlyToken = await readOnlyAccessToken(alice.id);
  sessions.owner = (await session(accountKey, "ro")).call;
  const key = await session(readOnlyKey, "ro");
  const token = await session(readOnlyToken);
  sessions.key = key.call;
  sessions.token = token.call;
  listed.key = key.tools;
  listed.token = token.tools;
}, 90_000);

afterAll(async () => {
  for (const client of clients) await client.close();
  await stack?.stop();
});

/** The primitive type a tool addresses (snapshot and fork tools: the kv holds the seeded snapshot). */
const typeOf = (tool: (typeof TOOLS)[number]): PrimitiveType | undefined =>
  tool.type ?? (tool.anyType ? "kv" : undefined);

/**
 * The group's state through its REST reads. A queue's `delayed` count is left out: a job an
 * earlier rightful call retried with a delay turns ready with time alone.
 */
const state = async () =>
  (await readState(stack.cloud.url, accountKey, own)).map((line) => line.replace(/"delayed":\d+,?/g, ""));

/** What a call with `args` does, as the action's operation declares it for them. */
function writes(tool: (typeof TOOLS)[number], action: string, args: Record<string, unknown>): boolean {
  const op = OPS.get(tool.actions[action]?.op as string) as AnyOperation;
  return accessOf(op, args) === "write";
}

describe("read-only credentials on MCP", () => {
  it("see every tool (nothing is hidden) and the connection is listed read-only", async () => {
    // The key tools too (apps/mcp serves them): refused when a read-only credential mints or
    // revokes (key-tools.test.ts), as an OAuth token's every call of them is.
    const all = [...TOOLS, ...KEY_TOOLS].map((t) => t.name).sort();
    expect(listed.key).toEqual(all);
    expect(listed.token).toEqual(all);
    const [connection] = await listConnections(stack.cloud.api.hub.pool, workspace);
    expect(connection).toMatchObject({ client_name: "Reader Agent", group: "ro", tools: ["*"], read_only: true });
  });

  it("refuse every writing action (forbidden, nothing changed) by key and token; the workspace key's same call succeeds; reads succeed", async () => {
    const wrong: string[] = [];
    let n = 0;
    let refused = 0;
    let read = 0;
    for (const tool of TOOLS) {
      for (const [action, sample] of samplesOf(tool)) {
        const type = sample.groupWide ? undefined : typeOf(tool);
        const primitive = type === undefined ? {} : { primitive: own.ids[type] };
        const made =
          sample.prepare !== undefined ? await sample.prepare(sessions.owner, own.ids[type as PrimitiveType]) : {};
        const objects = (): Objects => ({
          job: own.job,
          memory: own.memory,
          snapshot: own.snapshot,
          lease: "",
          branch: "br",
          request: "",
          ...made,
          n: ++n,
        });
        const args = { ...primitive, ...sample.args(objects()) };
        const where = `${tool.name}.${action}`;
        if (!writes(tool, action, args)) {
          for (const who of ["key", "token"] as const) {
            const got = refusalOf(await sessions[who](tool.name, args));
            if (got !== "ok") wrong.push(`${where} (reads) as ${who}: ${got}`);
          }
          read++;
          continue;
        }
        const before = await state();
        for (const who of ["key", "token"] as const) {
          const result = await sessions[who](tool.name, args);
          const got = refusalOf(result);
          if (got !== "forbidden") wrong.push(`${where} as ${who}: ${got} ${JSON.stringify(result).slice(0, 200)}`);
        }
        const after = await state();
        const changed = after.filter((line, i) => line !== before[i]);
        if (changed.length > 0) wrong.push(`${where}: changed ${changed.map((l) => l.slice(0, 600)).join(" | ")}`);
        // The rightful caller: the workspace key, the same arguments, the same objects.
        const rightful = refusalOf(await sessions.owner(tool.name, args));
        if (rightful !== (sample.ownerGets ?? "ok")) wrong.push(`${where} by the workspace key: ${rightful}`);
        refused++;
      }
    }
    expect(wrong).toEqual([]);
    expect(refused).toBeGreaterThan(30);
    expect(read).toBeGreaterThan(15);
    console.log(`MCP read-only: ${refused} writing actions refused twice each, ${read} reading actions allowed`);
  }, 300_000);

  it("db: a writing statement through db_query is refused; db_exec with only SELECTs runs; a batch with one INSERT writes nothing", async () => {
    const db = own.ids.db;
    const count = async () =>
      (await sessions.owner("db_query", { primitive: db, sql: "SELECT count(*) AS n FROM t" })).structuredContent
        ?.rows[0].n;
    const before = await count();
    for (const who of ["key", "token"] as const) {
      const insert = await sessions[who]("db_query", { primitive: db, sql: "INSERT INTO t VALUES ('q')" });
      expect([who, refusalOf(insert)]).toEqual([who, "forbidden"]);
      const select = await sessions[who]("db_exec", { primitive: db, sql: "SELECT count(*) AS n FROM t" });
      expect([who, refusalOf(select), select.structuredContent?.rows]).toEqual([who, "ok", [{ n: before }]]);
      const statements = [{ sql: "SELECT 1" }, { sql: "INSERT INTO t VALUES ('b')" }];
      const batch = await sessions[who]("db_exec", { primitive: db, statements });
      expect([who, refusalOf(batch)]).toEqual([who, "forbidden"]);
    }
    expect(await count()).toBe(before);
    // The rightful caller's same batch writes.
    const batch = [{ sql: "SELECT 1" }, { sql: "INSERT INTO t VALUES ('b')" }];
    expect(refusalOf(await sessions.owner("db_exec", { primitive: db, statements: batch }))).toBe("ok");
    expect(await count()).toBe(before + 1);
  });

  it("a read-only key naming a group that does not exist makes none (403 forbidden); the workspace key does", async () => {
    const res = await rawInitialize(stack.mcpUrl, {
      authorization: `Bearer ${readOnlyKey}`,
      "x-service-group": "fresh",
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const own = await rawInitialize(stack.mcpUrl, {
      authorization: `Bearer ${accountKey}`,
      "x-service-group": "fresh",
    });
    expect(own.status).toBe(200);
  });
});
