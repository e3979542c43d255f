import { createKey } from "@prim/db";
import { type AnyOperation, OPERATIONS, type PrimitiveRecord } from "@prim/engine";
import type { RestRoute } from "@prim/http";
import {
  fastWorkspace,
  makerFor,
  prepared,
  requestFor,
  type Seeded,
  seed,
  send,
  startCloud,
  TARGETED_ROUTES,
  type TestCloud,
  typeOf,
  UNTARGETED_ROUTES,
  verdict,
} from "@prim/testkit/cloud";
import { type Principal, toolAllowed } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The spec's scoping rules for scoped keys, on every route of the table: a key bound to a group
// with a tool list, addressing that group (rules 2, 4, 5: each route it may call answers its
// success) and another group `away` (rule 1). What each route needs comes from its operation's
// declaration (account-only, its tool), so a new route is covered by itself.

const OPS = new Map<string, AnyOperation>(OPERATIONS.map((op) => [op.name, op]));

let cloud: TestCloud;
let workspace: string;
/** The workspace's own key (account-level): seeds a fresh group for each sweep. */
let accountKey: string;
let home: Seeded;
let away: Seeded;

beforeAll(async () => {
  cloud = await startCloud("scoped-routes");
  // A rate no sweep reaches: what is tested is scoping, not the rate.
  const created = await fastWorkspace(cloud.api.hub.pool, "Scoped");
  workspace = created.workspace.id;
  accountKey = created.key;
  home = await seed(cloud.url, created.key, "home");
  away = await seed(cloud.url, created.key, "away");
}, 60_000);
afterAll(() => cloud?.stop());

async function scopedKey(tools?: string[], group = "home"): Promise<string> {
  return (await createKey(cloud.api.hub.pool, { workspace, group, ...(tools ? { tools } : {}) })).key;
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

let sweeps = 0;

/**
 * Every targeted route, by a key with `tools` (null: every tool) scoped to a group seeded for
 * this sweep alone: what an allowed route changes is no other sweep's.
 */
async function sweep(tools: string[] | null): Promise<{ checked: number; wrong: string[] }> {
  const own = await seed(cloud.url, accountKey, `home-${++sweeps}`);
  const key = await scopedKey(tools ?? undefined, own.group.name);
  const wrong: string[] = [];
  let checked = 0;
  for (const route of TARGETED_ROUTES) {
    const expected = expectedAtHome(route, tools);
    const sample = requestFor(route, own);
    const request = expected === null ? await prepared(makerFor(cloud.url, accountKey), route, own, sample) : sample;
    const got = verdict(route, await send(cloud.url, key, request));
    const want = expected === null ? "allowed" : route.method === "HEAD" ? "status 403" : `403 ${expected}`;
    if (got !== want) wrong.push(`${request.method} ${request.path} (${route.op}): want ${want}, got ${got}`);
    checked++;
  }
  return { checked, wrong };
}

describe("a scoped key on every route of its own group (rules 2, 4, 5)", () => {
  it("with one tool: account routes 403 forbidden, other tools 403 tool_not_allowed, its tool allowed", async () => {
    const { checked, wrong } = await sweep(["kv_get"]);
    expect(wrong).toEqual([]);
    expect(checked).toBe(TARGETED_ROUTES.length);
  }, 120_000);

  it("with tool globs: the same, decided per pattern", async () => {
    const { wrong } = await sweep(["fs_*", "queue_receive", "db_query"]);
    expect(wrong).toEqual([]);
  }, 120_000);

  it("with every tool: only the account routes are refused", async () => {
    const { wrong } = await sweep(null);
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
