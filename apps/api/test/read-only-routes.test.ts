import { createKey } from "@prim/db";
import { type AnyOperation, accessOf, OPERATIONS } from "@prim/engine";
import type { RestRoute } from "@prim/http";
import {
  fastWorkspace,
  makerFor,
  prepared,
  type RouteRequest,
  readState,
  requestFor,
  type Seeded,
  seed,
  send,
  startCloud,
  TARGETED_ROUTES,
  type TestCloud,
  UNTARGETED_ROUTES,
  verdict,
} from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Read-only keys on every route of the table (issue 40, item 3: read-only is decided in
// `engine.invoke` from each operation's declaration, not by the key's tools). A read-only key
// with every group and every tool: each route whose operation writes for the sample's input, on a
// group seeded for it alone, answers 403 `forbidden` and changes nothing (every read route of the
// group answers the same before and after), then the workspace's own key succeeds with the same
// request on the same objects; each read route answers its success. The inputs that decide
// (a writing statement through /exec, a batch holding one, a signed URL for PUT) and SQL that
// writes through /query are refused too, and nothing of them is written.

const OPS = new Map<string, AnyOperation>(OPERATIONS.map((op) => [op.name, op]));
const ROUTES = [...TARGETED_ROUTES, ...UNTARGETED_ROUTES];

let cloud: TestCloud;
let workspace: string;
/** The workspace's own key: seeds, and is the rightful caller of every write. */
let accountKey: string;

beforeAll(async () => {
  cloud = await startCloud("read-only-routes");
  const created = await fastWorkspace(cloud.api.hub.pool, "Read-only");
  workspace = created.workspace.id;
  accountKey = created.key;
}, 60_000);
afterAll(() => cloud?.stop());

/** What a route's call does for the sample's body (db.exec, db.batch and presign decide by it). */
function writes(route: RestRoute, request: RouteRequest): boolean {
  const op = OPS.get(route.op) as AnyOperation;
  const input = request.contentType === "application/json" ? JSON.parse(request.body ?? "{}") : {};
  return accessOf(op, input) === "write";
}

const state = (own: Seeded) => readState(cloud.url, accountKey, own);

let sweeps = 0;

describe("a read-only key on every route of the table", () => {
  it("reads: each read route answers its success", async () => {
    const own = await seed(cloud.url, accountKey, `reads-${++sweeps}`);
    const key = (await createKey(cloud.api.hub.pool, { workspace, readOnly: true })).key;
    const wrong: string[] = [];
    let reads = 0;
    for (const route of ROUTES) {
      const request = requestFor(route, own);
      if (writes(route, request)) continue;
      reads++;
      const got = verdict(route, await send(cloud.url, key, request));
      if (got !== "allowed") wrong.push(`${request.method} ${request.path} (${route.op}): ${got}`);
    }
    expect(wrong).toEqual([]);
    expect(reads).toBeGreaterThan(30);
  }, 120_000);

  it("writes: each refused 403 forbidden changing nothing; the workspace key's same request succeeds", async () => {
    const key = (await createKey(cloud.api.hub.pool, { workspace, readOnly: true })).key;
    const make = makerFor(cloud.url, accountKey);
    const wrong: string[] = [];
    let refused = 0;
    const first = await seed(cloud.url, accountKey, `writes-${++sweeps}`);
    for (const route of ROUTES) {
      if (!writes(route, requestFor(route, first))) continue;
      // Each on a group seeded for it alone: what the rightful call changes is no other's.
      const own = refused === 0 ? first : await seed(cloud.url, accountKey, `writes-${++sweeps}`);
      const sample = requestFor(route, own);
      // A fresh group holds what each sample names; a job must be leased first for the calls on one.
      const prepare = SPECIAL[route.op] ?? ((o: Seeded, r: RouteRequest) => prepared(make, route, o, r));
      const request = route.tag === "queue" || SPECIAL[route.op] !== undefined ? await prepare(own, sample) : sample;
      const where = `${request.method} ${request.path} (${route.op})`;
      const before = await state(own);
      const answer = await send(cloud.url, key, request);
      const got = route.method === "HEAD" ? `${answer.status}` : `${answer.status} ${answer.code}`;
      const want = route.method === "HEAD" ? "403" : "403 forbidden";
      if (got !== want) wrong.push(`${where}: read-only key got ${got} ${answer.text.slice(0, 120)}`);
      else if (route.method !== "HEAD" && !answer.text.includes("read-only")) wrong.push(`${where}: ${answer.text}`);
      const after = await state(own);
      if (JSON.stringify(after) !== JSON.stringify(before)) wrong.push(`${where}: changed the group`);
      const rightful = verdict(route, await send(cloud.url, accountKey, request));
      if (rightful !== "allowed") wrong.push(`${where}: the workspace key got ${rightful}`);
      refused++;
    }
    expect(wrong).toEqual([]);
    // Every route of an operation that always writes, and none of those deciding by input (their samples read).
    expect(refused).toBe(ROUTES.filter((r) => OPS.get(r.op)?.access === "write").length);
    expect(refused).toBeGreaterThan(40);
  }, 300_000);
});

/**
 * Requests a write needs other than the sample to succeed for the rightful caller: a group
 * deleted is an empty one; a primitive is made in the sweep's group; an import carries the
 * group's own archive (to a new group).
 */
const SPECIAL: Partial<Record<RestRoute["op"], (own: Seeded, sample: RouteRequest) => Promise<RouteRequest>>> = {
  "group.delete": async (own, sample) => {
    const empty = `${own.group.name}-empty`;
    await makerFor(cloud.url, accountKey)("POST", "/v1/groups", { name: empty });
    return { ...sample, path: `/v1/groups/${empty}` };
  },
  "primitive.create": async (own, sample) => ({
    ...sample,
    body: JSON.stringify({ name: "made", type: "kv", group: own.group.name }),
  }),
  "group.import": async (own) => {
    const exported = await fetch(`${cloud.url}/v1/groups/${own.group.id}/export`, {
      headers: { authorization: `Bearer ${accountKey}` },
    });
    expect(exported.status).toBe(200);
    const digest = exported.headers.get("x-prim-archive-sha256") as string;
    const archive = Buffer.from(await exported.arrayBuffer());
    // A Buffer is a body fetch sends as is (RouteRequest's body is typed for text).
    const body = archive as unknown as string;
    return {
      method: "POST",
      path: `/v1/groups/${own.group.name}-copy/import?sha256=${digest}`,
      body,
      contentType: "application/octet-stream",
    };
  },
};

describe("what decides by its input", () => {
  let own: Seeded;
  let key: string;
  const db = () => `/v1/primitives/${own.ids.db}`;
  const rows = async () => {
    const res = await send(cloud.url, accountKey, {
      method: "POST",
      path: `${db()}/query`,
      body: JSON.stringify({ sql: "SELECT count(*) AS n FROM t" }),
      contentType: "application/json",
    });
    return JSON.parse(res.text).rows[0];
  };
  const post = (k: string, path: string, body: unknown) =>
    send(cloud.url, k, { method: "POST", path, body: JSON.stringify(body), contentType: "application/json" });

  beforeAll(async () => {
    own = await seed(cloud.url, accountKey, "decided");
    key = (await createKey(cloud.api.hub.pool, { workspace, group: own.group.name, readOnly: true })).key;
  }, 60_000);

  it("/exec with a SELECT reads; with an INSERT, or /query with one, is refused and writes nothing", async () => {
    const before = await rows();
    const select = await post(key, `${db()}/exec`, { sql: "SELECT v FROM t" });
    expect(select.status).toBe(200);
    expect(JSON.parse(select.text).rows).toHaveLength(1);
    for (const path of ["exec", "query"]) {
      for (const sql of [
        "INSERT INTO t VALUES ('x')",
        "WITH d AS (SELECT 1) DELETE FROM t",
        "PRAGMA user_version = 7",
      ]) {
        const answer = await post(key, `${db()}/${path}`, { sql });
        expect([path, sql, answer.status, answer.code]).toEqual([path, sql, 403, "forbidden"]);
      }
    }
    expect(await rows()).toEqual(before);
    const version = await post(accountKey, `${db()}/query`, { sql: "PRAGMA user_version" });
    expect(JSON.parse(version.text).rows).toEqual([{ user_version: 0 }]);
    // The rightful caller writes with the same request.
    expect((await post(accountKey, `${db()}/exec`, { sql: "INSERT INTO t VALUES ('x')" })).status).toBe(200);
    expect((await rows()).n).toBe(before.n + 1);
  });

  it("a batch holding one writing statement is refused before any of it runs; only SELECTs run", async () => {
    const before = await rows();
    const statements = [{ sql: "SELECT 1" }, { sql: "INSERT INTO t VALUES ('batched')" }, { sql: "SELECT 2" }];
    const refused = await post(key, `${db()}/batch`, { statements });
    expect([refused.status, refused.code]).toEqual([403, "forbidden"]);
    expect(await rows()).toEqual(before);
    const reads = await post(key, `${db()}/batch`, {
      statements: [{ sql: "SELECT 1 AS a" }, { sql: "SELECT v FROM t" }],
    });
    expect(reads.status).toBe(200);
    expect((await post(accountKey, `${db()}/batch`, { statements })).status).toBe(200);
    expect((await rows()).n).toBe(before.n + 1);
  });

  it("whoami says it: read_only true for the read-only key, false for the workspace key", async () => {
    const who = JSON.parse((await send(cloud.url, key, { method: "GET", path: "/v1/whoami" })).text);
    expect(who).toMatchObject({
      workspace,
      kind: "scoped",
      group: { name: own.group.name },
      tools: null,
      read_only: true,
    });
    const owner = JSON.parse((await send(cloud.url, accountKey, { method: "GET", path: "/v1/whoami" })).text);
    expect(owner).toMatchObject({ workspace, kind: "workspace", read_only: false });
  });

  it("a signed URL for GET is made; one for PUT is refused", async () => {
    const presign = `/v1/primitives/${own.ids.storage}/presign`;
    const get = await post(key, presign, { key: "obj.txt", method: "GET" });
    expect(get.status).toBe(200);
    const read = await fetch(JSON.parse(get.text).url);
    expect(await read.text()).toContain("SEEDED-DATA");
    const put = await post(key, presign, { key: "obj.txt", method: "PUT" });
    expect([put.status, put.code]).toEqual([403, "forbidden"]);
    expect((await post(accountKey, presign, { key: "obj.txt", method: "PUT" })).status).toBe(200);
  });
});
