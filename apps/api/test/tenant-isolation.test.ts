import { createWorkspace } from "@prim/db";
import { REST_ROUTES } from "@prim/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCloud, type TestCloud } from "./cloud.js";
import {
  MARK,
  requestFor,
  type Seeded,
  seed,
  send,
  TARGETED_ROUTES,
  typeOf,
  UNTARGETED_ROUTES,
} from "./route-samples.js";

// Tenant isolation, generated from the route table: workspace A's key, for every route,
// addressing workspace B's group, primitives, keys, objects, files, jobs, memories, secrets,
// branches and snapshots. Never B's data, always 404 `not_found`; and B's data is intact after.

let cloud: TestCloud;
let keyA: string;
let keyB: string;
let b: Seeded;

beforeAll(async () => {
  cloud = await startCloud("isolation");
  const pool = cloud.api.hub.pool;
  keyA = (await createWorkspace(pool, { name: "A", plan: "pro" })).key;
  keyB = (await createWorkspace(pool, { name: "B", plan: "pro" })).key;
  await seed(cloud.url, keyA, "a-group");
  b = await seed(cloud.url, keyB, "b-group");
}, 60_000);
afterAll(() => cloud?.stop());

describe("another workspace's ids, on every route", () => {
  it("covers the whole route table", () => {
    const signed = REST_ROUTES.filter((r) => r.url.startsWith("/v1/signed"));
    expect(TARGETED_ROUTES.length + UNTARGETED_ROUTES.length + signed.length).toBe(REST_ROUTES.length);
    expect(TARGETED_ROUTES.length).toBeGreaterThan(70);
  });

  it("answers 404 not_found and nothing of B for each targeted route, by id and by name", async () => {
    const leaks: string[] = [];
    for (const route of TARGETED_ROUTES) {
      for (const groupBy of route.target === "group" ? (["id", "name"] as const) : (["id"] as const)) {
        const request = requestFor(route, b, groupBy);
        const answer = await send(cloud.url, keyA, request);
        const where = `${request.method} ${request.path}`;
        const expected = route.method === "HEAD" ? { status: 404 } : { status: 404, code: "not_found" };
        const got = route.method === "HEAD" ? { status: answer.status } : { status: answer.status, code: answer.code };
        if (JSON.stringify(got) !== JSON.stringify(expected) || answer.text.includes(MARK)) {
          leaks.push(`${where} (${route.op}, ${typeOf(route)}) → ${answer.status} ${answer.text.slice(0, 160)}`);
        }
      }
    }
    expect(leaks).toEqual([]);
  }, 120_000);

  it("keeps B out of A's untargeted routes: lists, creates into B's group, the audit trail", async () => {
    const answers: string[] = [];
    for (const route of UNTARGETED_ROUTES) {
      const request = requestFor(route, b);
      // A create naming B's group must not find it (A has no group of that name).
      if (route.op === "primitive.create") request.body = JSON.stringify({ name: "x", type: "kv", group: "b-group" });
      const answer = await send(cloud.url, keyA, request);
      answers.push(`${route.method} ${route.url} ${answer.status}`);
      for (const id of [b.group.id, ...Object.values(b.ids), b.job, b.memory, b.snapshot]) {
        expect(answer.text, `${route.method} ${route.url}`).not.toContain(id);
      }
      expect(answer.text).not.toContain(MARK);
      if (route.op === "primitive.create") expect(answer).toMatchObject({ status: 404, code: "not_found" });
    }
    const trail = await send(cloud.url, keyA, { method: "GET", path: "/v1/audit?group=b-group" });
    expect(JSON.parse(trail.text).data).toEqual([]);
    expect(answers.length).toBe(UNTARGETED_ROUTES.length);
  });

  it("left every piece of B's data as it was", async () => {
    const get = async (path: string) => send(cloud.url, keyB, { method: "GET", path });
    const p = (type: keyof Seeded["ids"]) => `/v1/primitives/${b.ids[type]}`;
    expect(JSON.parse((await get(`${p("kv")}/keys/k`)).text).value).toBe(`${MARK} kv`);
    expect((await get(`${p("storage")}/objects/obj.txt`)).text).toBe(`${MARK} storage`);
    expect((await get(`${p("fs")}/files/dir/file.txt`)).text).toBe(`${MARK} fs`);
    expect(JSON.parse((await get(`${p("queue")}/queues/q/messages/${b.job}`)).text).status).toBe("ready");
    expect(JSON.parse((await get(`${p("memory")}/memories/${b.memory}`)).text).superseded_by).toBeNull();
    expect(JSON.parse((await get(`${p("vault")}/secrets`)).text).data.map((s: { name: string }) => s.name)).toEqual([
      "SECRET",
    ]);
    expect(JSON.parse((await get(`${p("db")}/branches`)).text).data.map((x: { name: string }) => x.name)).toEqual([
      "br",
    ]);
    const listed = JSON.parse((await get("/v1/primitives?group=b-group")).text).data;
    expect(listed.map((x: { name: string; paused: boolean }) => [x.name, x.paused]).sort()).toEqual(
      ["db", "fs", "kv", "memory", "queue", "storage", "vault"].map((t) => [`${t}-1`, false]),
    );
    const rows = await send(cloud.url, keyB, {
      method: "POST",
      path: `${p("db")}/query`,
      body: JSON.stringify({ sql: "SELECT v FROM t" }),
      contentType: "application/json",
    });
    expect(JSON.parse(rows.text).rows).toEqual([{ v: `${MARK} db` }]);
  });
});
