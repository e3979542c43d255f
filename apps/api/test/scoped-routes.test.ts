import { createKey } from "@prim/db";
import { type AnyOperation, OPERATIONS, type PrimitiveRecord } from "@prim/engine";
import type { RestRoute } from "@prim/http";
import {
  type Answer,
  fastWorkspace,
  type RouteRequest,
  requestFor,
  type Seeded,
  seed,
  send,
  startCloud,
  TARGETED_ROUTES,
  type TestCloud,
  typeOf,
  UNTARGETED_ROUTES,
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

/** The route's success: its own status, or for a route that picks one (`respond`), a 2xx. */
function succeeded(route: RestRoute, status: number): boolean {
  return route.respond === undefined ? status === (route.status ?? 200) : status >= 200 && status < 300;
}

/**
 * vault.fetch's sample calls https://example.com/; a machine with no route there gets the
 * engine's 502 upstream_error, an answer only a call let through gives.
 */
const unreachable = (route: RestRoute, answer: Answer) =>
  route.op === "vault.fetch" && answer.status === 502 && answer.code === "upstream_error";

/** "allowed" for the route's success, else the refusal's code (a HEAD has no body: its status). */
function verdict(route: RestRoute, answer: Answer): string {
  if (succeeded(route, answer.status) || unreachable(route, answer)) return "allowed";
  return route.method === "HEAD"
    ? `status ${answer.status}`
    : `${answer.status} ${answer.code ?? answer.text.slice(0, 120)}`;
}

/** A request with the workspace's own key (making what a sweep's request needs); its JSON answer. */
async function asAccount(method: string, path: string, body: unknown, contentType = "application/json") {
  const raw = contentType === "application/json" ? JSON.stringify(body) : String(body);
  const answer = await send(cloud.url, accountKey, { method, path, body: raw, contentType });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return JSON.parse(answer.text) as { id: string; data: { id: string; lease_token: string }[] };
}

/** A job of the sweep's queue `q` sent and received now (leased): its id and lease token. */
async function leasedJob(own: Seeded): Promise<{ id: string; lease_token: string }> {
  const q = `/v1/primitives/${own.ids.queue}/queues/q`;
  await asAccount("POST", `${q}/messages`, { body: 1 });
  const [job] = (await asAccount("POST", `${q}/receive`, {})).data;
  return job as { id: string; lease_token: string };
}

/** The request for job `job` with its lease token (in place of the seeded job's and a made-up one). */
function forJob(own: Seeded, request: RouteRequest, job: { id: string; lease_token: string }): RouteRequest {
  const body = { ...JSON.parse(request.body ?? "{}"), lease_token: job.lease_token };
  return { ...request, path: request.path.replace(own.job, job.id), body: JSON.stringify(body) };
}

/**
 * What an allowed request needs made before it, so that it can succeed: what an earlier route
 * of the sweep took away (storage.delete the object, fs.delete the file, memory.forget the
 * memory, db.branch.promote the branch), or a job in the state the route acts on. Answers the
 * request to send.
 */
const MAKE_FIRST: Partial<Record<RestRoute["op"], (own: Seeded, request: RouteRequest) => Promise<RouteRequest>>> = {
  "storage.copy": async (own, request) => {
    await asAccount("PUT", `/v1/primitives/${own.ids.storage}/objects/obj.txt`, "again", "text/plain");
    return request;
  },
  "fs.move": async (own, request) => {
    await asAccount("PUT", `/v1/primitives/${own.ids.fs}/files/dir/file.txt`, "again", "text/plain");
    return request;
  },
  "db.branch.delete": async (own, request) => {
    await asAccount("POST", `/v1/primitives/${own.ids.db}/branches`, { name: "br" });
    return request;
  },
  "memory.supersede": async (own, request) => {
    const made = await asAccount("POST", `/v1/primitives/${own.ids.memory}/memories`, { kind: "fact", text: "x" });
    return { ...request, path: request.path.replace(own.memory, made.id) };
  },
  "queue.ack": async (own, request) => forJob(own, request, await leasedJob(own)),
  "queue.heartbeat": async (own, request) => forJob(own, request, await leasedJob(own)),
  "queue.requeue": async (own, request) => {
    const job = await leasedJob(own);
    const q = `/v1/primitives/${own.ids.queue}/queues/q`;
    await asAccount("POST", `${q}/messages/${job.id}/ack`, { lease_token: job.lease_token, action: "dead" });
    return { ...request, path: request.path.replace(own.job, job.id) };
  },
};

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
    const make = expected === null ? MAKE_FIRST[route.op] : undefined;
    const request = make === undefined ? sample : await make(own, sample);
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
