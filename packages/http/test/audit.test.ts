import { LOCAL_PRINCIPAL, type ManualClock, type PrimitiveInfo, type Principal } from "@prim/engine";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

const ENTRY_KEYS = [
  "action",
  "actor",
  "detail",
  "group",
  "id",
  "instance",
  "primitive",
  "primitive_id",
  "target",
  "ts",
];

async function seeded() {
  let scoped = false;
  const s = await startServer({
    authenticate: (req) => {
      scoped = req.headers.authorization === "Bearer scoped";
      return scoped
        ? ({ kind: "scoped", workspace: "local", actor: "key:key_a", groupId: null, tools: null } satisfies Principal)
        : LOCAL_PRINCIPAL;
    },
  });
  await s.api("POST", "/v1/groups", { name: "app" });
  s.clock.advance(1000);
  await s.api("POST", "/v1/groups", { name: "ops" });
  const kv = (await s.api("POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body as PrimitiveInfo;
  const db = (await s.api("POST", "/v1/primitives", { name: "main", type: "db", group: "ops" })).body as PrimitiveInfo;
  s.clock.advance(1000);
  await s.api("PUT", `/v1/primitives/${kv.id}/keys/a`, { value: 1 });
  await s.api("GET", `/v1/primitives/${kv.id}/keys/a`);
  await s.api("POST", `/v1/primitives/${db.id}/query`, { sql: "CREATE TABLE t (x)" });
  s.clock.advance(1000);
  await s.api("GET", `/v1/primitives/${kv.id}/keys/missing`);
  return { ...s, kv, db };
}

describe("audit routes", () => {
  it("GET /v1/audit: newest first, exact AuditEntry shape, group events with primitive 'group'", async () => {
    const s = await seeded();
    const res = await s.api("GET", "/v1/audit");
    expect(res.status).toBe(200);
    const entries = res.body.data;
    expect(entries.map((e: { action: string }) => e.action)).toEqual([
      "kv.get",
      "db.query",
      "kv.get",
      "kv.set",
      "primitive.create",
      "primitive.create",
      "group.create",
      "group.create",
    ]);
    for (const e of entries) expect(Object.keys(e).sort()).toEqual(ENTRY_KEYS);
    const group = entries[entries.length - 1];
    expect(group).toMatchObject({
      primitive: "group",
      primitive_id: null,
      instance: null,
      group: "app",
      actor: "local",
    });
    expect(entries[0]).toMatchObject({
      primitive: "kv",
      primitive_id: s.kv.id,
      instance: "cache",
      group: "app",
      target: "missing",
      detail: { error: "not_found" },
    });
    expect(entries[0].id).toMatch(/^aud_/);
    // Reading the trail is not audited.
    expect((await s.api("GET", "/v1/audit")).body.data.length).toBe(entries.length);
  });

  it("filters: group, type, primitive, action prefix, actor prefix, since/until inclusive, paging", async () => {
    const s = await seeded();
    const actions = async (query: string) =>
      (await s.api("GET", `/v1/audit?${query}`)).body.data.map((e: { action: string }) => e.action);
    expect(await actions("group=ops")).toEqual(["db.query", "primitive.create", "group.create"]);
    expect(await actions("type=group")).toEqual(["group.create", "group.create"]);
    expect(await actions(`primitive=${s.kv.id}`)).toEqual(["kv.get", "kv.get", "kv.set", "primitive.create"]);
    expect(await actions("action=kv.")).toEqual(["kv.get", "kv.get", "kv.set"]);
    expect(await actions("action=primitive*")).toEqual(["primitive.create", "primitive.create"]);
    expect(await actions("action=kv.set")).toEqual(["kv.set"]);
    expect(await actions("actor=loc*")).toHaveLength(8);
    expect(await actions("actor=key:*")).toEqual([]);
    const t0 = 1_800_000_000_000;
    expect(await actions(`since=${t0 + 2000}&until=${t0 + 2000}`)).toEqual(["db.query", "kv.get", "kv.set"]);
    expect(await actions(`until=${t0}`)).toEqual(["group.create"]);
    const page1 = await s.api("GET", "/v1/audit?limit=3");
    expect(page1.body.data).toHaveLength(3);
    const page2 = await s.api("GET", `/v1/audit?limit=3&cursor=${page1.body.next_cursor}`);
    expect(page2.body.data[0].id).not.toBe(page1.body.data[2].id);
    expect(page2.body.data.map((e: { action: string }) => e.action)).toEqual([
      "kv.set",
      "primitive.create",
      "primitive.create",
    ]);
  });

  it("rejects an unknown type and since after until with 400", async () => {
    const s = await seeded();
    for (const query of ["type=table", "since=10&until=5", "since=soon", "limit=201"]) {
      const res = await s.api("GET", `/v1/audit?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
  });

  it("group and primitive routes narrow the trail; scoped keys are refused", async () => {
    const s = await seeded();
    const group = await s.api("GET", "/v1/groups/app/audit");
    expect(group.body.data.map((e: { action: string }) => e.action)).toEqual([
      "kv.get",
      "kv.get",
      "kv.set",
      "primitive.create",
      "group.create",
    ]);
    expect((await s.api("GET", "/v1/groups/app/audit?group=ops")).body.data).toEqual([]);
    const prim = await s.api("GET", `/v1/primitives/${s.db.id}/audit`);
    expect(prim.body.data.map((e: { action: string }) => e.action)).toEqual(["db.query", "primitive.create"]);
    for (const path of ["/v1/audit", "/v1/groups/app/audit", `/v1/primitives/${s.kv.id}/audit`]) {
      const res = await s.api("GET", path, undefined, { authorization: "Bearer scoped" });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
  });

  it("prunes entries past the retention", async () => {
    const s = await seeded();
    await s.engine.services.audit.flush();
    const clock = s.clock as ManualClock;
    clock.advance(10 * 86_400_000);
    await s.api("GET", `/v1/primitives/${s.kv.id}/keys/a`);
    await s.engine.services.audit.flush();
    const pruned = await s.engine.services.audit.prune(5 * 86_400_000, clock);
    expect(pruned).toBe(8);
    expect((await s.api("GET", "/v1/audit")).body.data.map((e: { action: string }) => e.action)).toEqual(["kv.get"]);
  });
});
