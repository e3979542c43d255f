// Tenant isolation on MCP, generated from the tool catalog (@prim/mcp TOOLS, what the server
// registers): every action of every tool, called in workspace A's sessions — its workspace key
// on A's group, and an OAuth token of A's consented to that group — with workspace B's
// primitive (by id, and by name), and with A's own primitive and B's job, memory and snapshot
// ids. Always refused with not_found, never B's data; each next to its positive control, B's
// key making the same call on the same freshly made object, which succeeds. Then the session
// door: A's credentials naming B's group.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createUser, createWorkspace } from "@prim/db";
import { KEY_TOOLS, TOOLS } from "@prim/mcp";
import {
  authorizeUrl,
  Browser,
  call,
  consent,
  exchangeCode,
  MARK,
  type OAuthStack,
  pkce,
  registerClient,
  type Seeded,
  seed,
  startOAuthStack,
} from "@prim/testkit/cloud";
import type { PrimitiveType } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawInitialize } from "./raw.js";
import {
  type CallTool,
  type Objects,
  refusalOf,
  samplesOf,
  TOOL_SAMPLES,
  type ToolResult,
  VAULT_HOST,
} from "./tool-samples.js";

let stack: OAuthStack;
const ws: Record<"a" | "b", { id: string; key: string; seeded: Seeded }> = {} as never;
/** A's OAuth access token (every tool, A's group `a-group`). */
let token: string;
const clients: Client[] = [];
const sessions: Record<"aKey" | "aOAuth" | "b", CallTool> = {} as never;
/** B's session's client (its tools/list is the server's catalog). */
let bClient: Client;

async function session(credential: string, group?: string): Promise<CallTool> {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (group !== undefined) headers["x-service-group"] = group;
  const client = new Client({ name: "isolation", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { requestInit: { headers } }));
  clients.push(client);
  return async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult;
}

beforeAll(async () => {
  stack = await startOAuthStack("mcp_isolation");
  const pool = stack.cloud.api.hub.pool;
  for (const [name, group] of [
    ["a", "a-group"],
    ["b", "b-group"],
  ] as const) {
    // Limits are on; an Enterprise rate no sweep reaches (the sweep is not about rates).
    const made = await createWorkspace(pool, {
      name: name.toUpperCase(),
      plan: "enterprise",
      rps: 100_000,
      burst: 100_000,
    });
    ws[name] = { id: made.workspace.id, key: made.key, seeded: await seed(stack.cloud.url, made.key, group) };
    const grant = { name: "SECRET", allow: { hosts: [VAULT_HOST] } };
    const granted = await call(
      stack.cloud.url,
      made.key,
      "POST",
      `/v1/primitives/${ws[name].seeded.ids.vault}/grants`,
      grant,
    );
    expect(granted.status).toBeLessThan(300);
  }
  // A's primitives get names of their own: B's names must find nothing in A's group, not A's namesakes.
  for (const [type, id] of Object.entries(ws.a.seeded.ids)) {
    const renamed = await call(stack.cloud.url, ws.a.key, "PATCH", `/v1/primitives/${id}`, { name: `a-${type}` });
    expect(renamed.status).toBe(200);
  }
  const alice = await createUser(pool, { email: "alice@a.test", password: "correct horse 1", workspace: ws.a.id });
  token = await accessToken(alice.id, ws.a.id);
  sessions.aKey = await session(ws.a.key, "a-group");
  sessions.aOAuth = await session(token);
  sessions.b = await session(ws.b.key, "b-group");
  bClient = clients[clients.length - 1] as Client;
}, 90_000);

afterAll(async () => {
  for (const client of clients) await client.close();
  await stack?.stop();
});

/** An access token of `user`'s, consented to every tool on A's group `a-group`. */
async function accessToken(user: string, workspace: string): Promise<string> {
  const clientId = await registerClient(stack, "Isolation Agent");
  const { verifier, challenge } = pkce();
  const url = authorizeUrl(stack, clientId, challenge);
  const browser = new Browser({ [new URL(stack.dashboard).host]: { user } });
  const back = await consent(stack, browser, url, { workspace, group: "a-group", everyTool: true, action: "allow" });
  if (!(back instanceof URL)) throw new Error(`consent: ${back.status} ${await back.text()}`);
  const issued = await exchangeCode(stack, { clientId, verifier, code: back.searchParams.get("code") as string });
  expect(issued.status).toBe(200);
  return issued.body.access_token as string;
}

/** The primitive type a tool addresses (snapshot and fork tools: B's kv holds the seeded snapshot). */
const typeOf = (tool: (typeof TOOLS)[number]): PrimitiveType | undefined =>
  tool.type ?? (tool.anyType ? "kv" : undefined);

describe("every tool of the catalog", () => {
  it("is the server's whole catalog, each action with a sample", async () => {
    const listed = await bClient.listTools();
    // The key tools are the control plane's, not a primitive's: their isolation is key-tools.test.ts's.
    expect(listed.tools.map((t) => t.name).sort()).toEqual([...TOOLS, ...KEY_TOOLS].map((t) => t.name).sort());
    expect(Object.keys(TOOL_SAMPLES).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const actions = TOOLS.flatMap((tool) => samplesOf(tool).map(([action]) => `${tool.name}.${action}`));
    expect(actions.length).toBe(Object.values(TOOL_SAMPLES).flatMap((s) => Object.keys(s)).length);
  });

  it("refuses A's key and A's OAuth token B's primitives by id and name, and B's ids in A's own (not_found, none of B's data); B's own call succeeds", async () => {
    const b = ws.b.seeded;
    const leaks: string[] = [];
    let n = 0;
    let calls = 0;
    let controls = 0;
    for (const tool of TOOLS) {
      for (const [action, sample] of samplesOf(tool)) {
        const type = sample.groupWide ? undefined : typeOf(tool);
        const where = `${tool.name}.${action}`;
        const bPrimitive = type === undefined ? undefined : b.ids[type];
        const prepared = sample.prepare !== undefined ? await sample.prepare(sessions.b, bPrimitive as string) : {};
        const objects = (): Objects => ({
          job: b.job,
          memory: b.memory,
          snapshot: b.snapshot,
          lease: "",
          branch: "br",
          request: "",
          ...prepared,
          n: ++n,
        });
        const bIds = [b.job, b.memory, b.snapshot, prepared.job, prepared.memory, prepared.request].filter(
          (x) => x !== undefined,
        );
        for (const who of ["aKey", "aOAuth"] as const) {
          const attempt = async (primitive: string | undefined, expected: string) => {
            const args = { ...(primitive === undefined ? {} : { primitive }), ...sample.args(objects()) };
            const result = await sessions[who](tool.name, args);
            calls++;
            const text = JSON.stringify(result);
            // Without a primitive argument the call runs in A's own group: its answer is A's.
            const foreign = primitive === undefined ? [MARK, b.group.id, ...Object.values(b.ids), ...bIds] : [MARK];
            const got = refusalOf(result);
            if (got !== expected || foreign.some((x) => text.includes(x))) {
              leaks.push(`${where} as ${who} on ${primitive ?? "its group"} → ${got}: ${text.slice(0, 200)}`);
            }
          };
          if (type === undefined) {
            await attempt(undefined, "ok");
            continue;
          }
          await attempt(b.ids[type], "not_found");
          await attempt(`${type}-1`, "not_found");
          // B's job, memory or snapshot named in A's own primitive of the type.
          if (bIds.some((id) => JSON.stringify(sample.args(objects())).includes(id))) {
            await attempt(ws.a.seeded.ids[type], "not_found");
          }
        }
        if (bPrimitive === undefined) continue;
        // Positive control: B's key, B's primitive, the same arguments (the same fresh objects).
        const own = await sessions.b(tool.name, { primitive: bPrimitive, ...sample.args(objects()) });
        controls++;
        const expected = sample.ownerGets ?? "ok";
        expect(refusalOf(own), `${where} by B: ${JSON.stringify(own.structuredContent).slice(0, 300)}`).toBe(expected);
      }
    }
    expect(leaks).toEqual([]);
    const actions = TOOLS.reduce((sum, tool) => sum + Object.keys(tool.actions).length, 0);
    console.log(
      `MCP isolation: ${TOOLS.length} tools, ${actions} actions; ${calls} calls by A, ${controls} controls by B`,
    );
  }, 120_000);
});

describe("the session's group", () => {
  it("refuses A's OAuth token B's group by id and name (403 group_mismatch), and A's key B's group id (400)", async () => {
    for (const group of [ws.b.seeded.group.id, "b-group"]) {
      const res = await rawInitialize(stack.mcpUrl, { authorization: `Bearer ${token}`, "x-service-group": group });
      expect(res.status, group).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("group_mismatch");
    }
    const byId = await rawInitialize(stack.mcpUrl, {
      authorization: `Bearer ${ws.a.key}`,
      "x-service-group": ws.b.seeded.group.id,
    });
    // No group of A's has that id, and a group is never made with an id's form (as any id that
    // names nothing: the answer says nothing of B).
    const body = (await byId.json()) as { error: { code: string; message: string } };
    expect({ status: byId.status, code: body.error.code }).toEqual({ status: 400, code: "invalid_request" });
    expect(body.error.message).toContain("form of a group id");
    // Positive control: B's key opens B's group by its id.
    const own = await rawInitialize(stack.mcpUrl, {
      authorization: `Bearer ${ws.b.key}`,
      "x-service-group": ws.b.seeded.group.id,
    });
    expect(own.status).toBe(200);
  });

  it("gives A's key naming B's group by name a group of A's own (spec: made on first use), holding none of B's", async () => {
    const inA = await session(ws.a.key, "b-group");
    const listed = await inA("primitive_list", {});
    expect(refusalOf(listed)).toBe("ok");
    expect(listed.structuredContent?.data).toEqual([]);
    // Positive control: the same call in B's session lists B's seven (and the forks B made above).
    const own = await sessions.b("primitive_list", {});
    expect((own.structuredContent?.data as { id: string }[] | undefined)?.map((p) => p.id)).toEqual(
      expect.arrayContaining(Object.values(ws.b.seeded.ids)),
    );
  });
});
