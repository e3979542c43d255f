import { LOCAL_PRINCIPAL, type Principal } from "@prim/engine";
import { startServer, type TestServer } from "@prim/testkit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RestRoute } from "../src/route.js";
import { REST_ROUTES } from "../src/routes/index.js";
import { readAll, type SeededGroup, seedGroup } from "./seed-world.js";

/**
 * Cross-group access, generated from the route table: a key scoped to group `other` calls every
 * route against group `owned` and gets the spec's answer (404 `not_found` for a primitive
 * outside its group, 403 `group_mismatch` for another group's paths or a body naming it, 403
 * `forbidden` on account-only routes), never data. A route added to the table is covered by
 * itself; one whose shape this file does not know fails the test until a case is written.
 */

/** Words stored in the owned group: none may appear in an answer to the other group's key. */
const OWNED_DATA = [
  "s3cret-value-for-fuzz",
  "text ünïcode",
  "stored object bytes",
  "file contents",
  "keep me",
  "harbour",
];

interface Expected {
  status: number;
  code?: string;
}

let server: TestServer;
let owned: SeededGroup;
let otherGroupId = "";
let ownedBefore: Awaited<ReturnType<typeof readAll>>;
let putToken = "";

const keyOf = (groupId: () => string): Principal => ({
  kind: "scoped",
  workspace: "local",
  actor: "key:key_other",
  groupId: groupId(),
  tools: null,
});

beforeAll(async () => {
  server = await startServer({
    manualClose: true,
    authenticate: (req) => (req.headers.authorization === "Bearer other" ? keyOf(() => otherGroupId) : LOCAL_PRINCIPAL),
  });
  owned = await seedGroup(server, "owned");
  otherGroupId = (await server.api("POST", "/v1/groups", { name: "other" })).body.id;
  await server.api("POST", "/v1/primitives", { name: "mine", type: "kv", group: "other" });
  const storage = `/v1/primitives/${owned.ids.storage}`;
  putToken = (await server.api("POST", `${storage}/presign`, { key: "up.txt", method: "PUT" })).body.url.split(
    "/v1/signed/",
  )[1];
  ownedBefore = await readAll(server, owned);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const TYPE_OF_TAG: Record<string, keyof SeededGroup["ids"]> = {
  kv: "kv",
  db: "db",
  storage: "storage",
  fs: "fs",
  queue: "queue",
  memory: "memory",
  vault: "vault",
  primitives: "kv",
  changes: "kv",
};

/** Values of the owned group for every path parameter, so a missing check would reach data. */
function pathOf(route: RestRoute): string {
  const type = TYPE_OF_TAG[route.tag];
  const values: Record<string, string> = {
    id: type === undefined ? "" : owned.ids[type],
    group: owned.name,
    queue: "jobs",
    topic: "news",
    job: owned.jobId,
    memory: owned.memoryId,
    branch: "b1",
    table: "t",
    name: "API_KEY",
  };
  const wildcard: Record<string, string> = {
    kv: "alpha",
    storage: "docs/a.txt",
    fs: "dir/a.txt",
    signed: route.method === "PUT" ? putToken : owned.signedToken,
  };
  return route.url
    .replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
      const value = values[name];
      if (value === undefined || value === "") throw new Error(`no cross-group value for :${name} in ${route.url}`);
      return value;
    })
    .replace(/\*$/, () => {
      const value = wildcard[route.tag];
      if (value === undefined) throw new Error(`no cross-group value for * in ${route.url}`);
      return value;
    });
}

/** The spec's answer to the other group's key on this route. */
function expectedFor(route: RestRoute): Expected {
  const op = server.engine.operation(route.op);
  if (op === undefined) throw new Error(`unknown operation ${route.op}`);
  if (op.accountOnly) return { status: 403, code: "forbidden" };
  if (route.target === "group") return { status: 403, code: "group_mismatch" };
  if (route.target === "id") return { status: 404, code: "not_found" };
  // Routes without a target: each needs its own case.
  switch (route.op) {
    case "storage.signed":
      // A signed URL is the credential; the caller's key neither helps nor hurts.
      return { status: 200 };
    case "primitive.create":
      return { status: 403, code: "group_mismatch" };
    case "primitive.list":
      return { status: 200 };
    case "auth.whoami":
      // Its own workspace and scope: nothing of the owned group.
      return { status: 200 };
    default:
      throw new Error(`no cross-group case for ${route.method} ${route.url} (${route.op})`);
  }
}

/** A body naming the owned group where the operation takes one, else an empty object. */
function bodyFor(route: RestRoute): string | undefined {
  if (route.method === "GET" || route.method === "HEAD") return undefined;
  if (route.rawBody) return "cross-group bytes";
  if (route.op === "primitive.create") return JSON.stringify({ name: "intruder", type: "kv", group: owned.name });
  return "{}";
}

async function call(route: RestRoute, path: string, query = "") {
  const body = bodyFor(route);
  const headers: Record<string, string> = { authorization: "Bearer other" };
  if (body !== undefined) headers["content-type"] = route.rawBody ? "text/plain" : "application/json";
  const res = await fetch(server.url + path + query, { method: route.method, headers, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe("cross-group: every route of the table, called with another group's key", () => {
  it("has a case for every route (a new route fails here until it has one)", () => {
    for (const route of REST_ROUTES) expect(() => [pathOf(route), expectedFor(route)], route.url).not.toThrow();
  });

  it.each(REST_ROUTES.map((r) => [`${r.method} ${r.url}`, r] as const))("%s", async (_name, route) => {
    const expected = expectedFor(route);
    const res = await call(route, pathOf(route));
    expect(res.status).toBe(expected.status);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    if (expected.code !== undefined && route.method !== "HEAD") {
      expect(JSON.parse(res.text)).toEqual({ error: { code: expected.code, message: expect.any(String) } });
    }
    if (route.op !== "storage.signed") for (const word of OWNED_DATA) expect(res.text).not.toContain(word);
    if (route.op === "primitive.list") {
      const listed = JSON.parse(res.text).data.map((p: { group: string }) => p.group);
      expect(new Set(listed)).toEqual(new Set(["other"]));
    }
  });

  it("a query or body naming the owned group answers 403 group_mismatch", async () => {
    const list = await call(
      REST_ROUTES.find((r) => r.op === "primitive.list") as RestRoute,
      "/v1/primitives",
      "?group=owned",
    );
    expect(JSON.parse(list.text).error.code).toBe("group_mismatch");
    const mine = (await server.api("GET", "/v1/primitives?group=other")).body.data[0].id;
    const fork = await server.api(
      "POST",
      `/v1/primitives/${mine}/fork`,
      { group: "owned" },
      { authorization: "Bearer other" },
    );
    expect(fork.status).toBe(403);
    expect(fork.body.error.code).toBe("group_mismatch");
  });

  it("leaves every record of the owned group as it was", async () => {
    // Signed URLs are capabilities: the signed PUT above wrote `up.txt` (the store's listing and
    // size grow by it); nothing else changed.
    const storage = `/v1/primitives/${owned.ids.storage}`;
    const grown = [`GET ${storage}/objects ""`, `GET ${storage} ""`];
    const unchanged = (reads: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(reads).filter(([read]) => !grown.includes(read)));
    const after = await readAll(server, owned);
    expect(unchanged(after)).toEqual(unchanged(ownedBefore));
    const listed = after[grown[0] as string]?.body as { data: { key: string }[] };
    expect(listed.data.map((o) => o.key)).toEqual(["docs/a.txt", "docs/b.bin", "up.txt"]);
    const created = (await server.api("GET", "/v1/primitives?group=owned")).body.data.map(
      (p: { name: string }) => p.name,
    );
    expect(created).not.toContain("intruder");
  });
});
