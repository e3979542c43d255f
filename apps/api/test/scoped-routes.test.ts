import { createKey, createWorkspace } from "@prim/db";
import { type AnyOperation, OPERATIONS, type PrimitiveRecord } from "@prim/engine";
import type { RestRoute } from "@prim/http";
import { type Principal, toolAllowed } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCloud, type TestCloud } from "./cloud.js";
import {
  type Answer,
  requestFor,
  type Seeded,
  seed,
  send,
  TARGETED_ROUTES,
  typeOf,
  UNTARGETED_ROUTES,
} from "./route-samples.js";

// The spec's scoping rules for scoped keys, on every route of the table: a key bound to group
// `home` with a tool list, addressing `home` (rules 2, 4, 5) and another group `away` (rule 1).
// What each route needs comes from its operation's declaration (account-only, its tool), so a
// new route is covered by itself.

const OPS = new Map<string, AnyOperation>(OPERATIONS.map((op) => [op.name, op]));

let cloud: TestCloud;
let workspace: string;
let home: Seeded;
let away: Seeded;

beforeAll(async () => {
  cloud = await startCloud("scoped-routes");
  const created = await createWorkspace(cloud.api.hub.pool, { name: "Scoped", plan: "pro" });
  workspace = created.workspace.id;
  home = await seed(cloud.url, created.key, "home");
  away = await seed(cloud.url, created.key, "away");
}, 60_000);
afterAll(() => cloud?.stop());

async function scopedKey(tools?: string[]): Promise<string> {
  return (await createKey(cloud.api.hub.pool, { workspace, group: "home", ...(tools ? { tools } : {}) })).key;
}

/** The tools of which the route needs one (none: any key reaching the group). */
function toolsNeeded(route: RestRoute): string[] {
  const op = OPS.get(route.op) as AnyOperation;
  const tool = typeof op.tool === "function" ? op.tool({ type: typeOf(route) } as PrimitiveRecord) : op.tool;
  return tool === undefined ? [] : typeof tool === "string" ? [tool] : [...tool];
}

/** What a key with `tools` addressing its own group gets: the refusal, or null when allowed. */
function expectedAtHome(route: RestRoute, tools: string[] | null): string | null {
  if (OPS.get(route.op)?.accountOnly) return "forbidden";
  const principal: Principal = { kind: "scoped", workspace, actor: "key:x", groupId: "g", tools };
  const needed = toolsNeeded(route);
  if (needed.length > 0 && !needed.some((t) => toolAllowed(principal, t))) return "tool_not_allowed";
  return null;
}

/** A refusal (401/403) or a fault (500) by its code; anything else means policy let it through. */
function verdict(route: RestRoute, answer: Answer): string {
  if (answer.status === 401 || answer.status === 403 || answer.status === 500) {
    return route.method === "HEAD" ? `status ${answer.status}` : (answer.code ?? `status ${answer.status}`);
  }
  return "allowed";
}

async function sweep(key: string, tools: string[] | null): Promise<{ checked: number; wrong: string[] }> {
  const wrong: string[] = [];
  let checked = 0;
  for (const route of TARGETED_ROUTES) {
    const expected = expectedAtHome(route, tools);
    const request = requestFor(route, home);
    const got = verdict(route, await send(cloud.url, key, request));
    const want = expected === null ? "allowed" : route.method === "HEAD" ? "status 403" : expected;
    if (got !== want) wrong.push(`${request.method} ${request.path} (${route.op}): want ${want}, got ${got}`);
    checked++;
  }
  return { checked, wrong };
}

describe("a scoped key on every route of its own group (rules 2, 4, 5)", () => {
  it("with one tool: account routes 403 forbidden, other tools 403 tool_not_allowed, its tool allowed", async () => {
    const { checked, wrong } = await sweep(await scopedKey(["kv_get"]), ["kv_get"]);
    expect(wrong).toEqual([]);
    expect(checked).toBe(TARGETED_ROUTES.length);
  }, 120_000);

  it("with tool globs: the same, decided per pattern", async () => {
    const { wrong } = await sweep(await scopedKey(["fs_*", "queue_receive", "db_query"]), [
      "fs_*",
      "queue_receive",
      "db_query",
    ]);
    expect(wrong).toEqual([]);
  }, 120_000);

  it("with every tool: only the account routes are refused", async () => {
    const { wrong } = await sweep(await scopedKey(), null);
    expect(wrong).toEqual([]);
  }, 120_000);
});

describe("a scoped key on every route of another group (rule 1)", () => {
  it("answers 404 for its primitives, 403 group_mismatch for its group paths, 403 forbidden for account routes", async () => {
    const key = await scopedKey();
    const wrong: string[] = [];
    for (const route of TARGETED_ROUTES) {
      for (const groupBy of route.target === "group" ? (["id", "name"] as const) : (["id"] as const)) {
        const request = requestFor(route, away, groupBy);
        const answer = await send(cloud.url, key, request);
        const accountOnly = OPS.get(route.op)?.accountOnly === true;
        const want = accountOnly
          ? [403, "forbidden"]
          : route.target === "group"
            ? [403, "group_mismatch"]
            : [404, "not_found"];
        const got = route.method === "HEAD" ? [answer.status, want[1]] : [answer.status, answer.code];
        if (got[0] !== want[0] || got[1] !== want[1]) {
          wrong.push(`${request.method} ${request.path} (${route.op}): want ${want.join(" ")}, got ${got.join(" ")}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it("keeps to its group on the untargeted routes", async () => {
    const key = await scopedKey();
    for (const route of UNTARGETED_ROUTES) {
      const answer = await send(cloud.url, key, requestFor(route, home));
      const op = OPS.get(route.op) as AnyOperation;
      if (op.accountOnly) expect([route.url, answer.status, answer.code]).toEqual([route.url, 403, "forbidden"]);
    }
    const listed = JSON.parse((await send(cloud.url, key, { method: "GET", path: "/v1/primitives" })).text);
    expect(new Set(listed.data.map((p: { group: string }) => p.group))).toEqual(new Set(["home"]));
    const elsewhere = await send(cloud.url, key, {
      method: "POST",
      path: "/v1/primitives",
      body: JSON.stringify({ name: "sneak", type: "kv", group: "away" }),
      contentType: "application/json",
    });
    expect(elsewhere.status).toBe(403);
  });
});
