import { LOCAL_PRINCIPAL, OPERATION_NAMES, type PrimitiveInfo, type Principal } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PrimitiveDefinition } from "../src/primitives/definition.js";
import { untargetedOp } from "../src/primitives/operation.js";
import { OPERATIONS, PRIMITIVE_DEFINITIONS } from "../src/registry.js";
import { testEngine } from "./helpers.js";

const local = LOCAL_PRINCIPAL;

async function setup(engineOptions = {}) {
  const t = testEngine(engineOptions);
  const group = await t.engine.invoke<{ id: string }>(local, "group.create", null, { name: "app" });
  const kv = await t.engine.invoke<PrimitiveInfo>(local, "primitive.create", null, {
    name: "cache",
    type: "kv",
    group: "app",
  });
  const scoped = (tools: string[] | null, groupId: string | null = group.id): Principal => ({
    kind: "scoped",
    workspace: "local",
    actor: "key:key_test",
    groupId,
    tools,
  });
  return { ...t, group, kv, scoped };
}

describe("engine.invoke policy", () => {
  it("refuses account-only operations to scoped principals with 403 forbidden", async () => {
    const { engine, kv, scoped } = await setup();
    await expect(engine.invoke(scoped(null), "group.create", null, { name: "other" })).rejects.toMatchObject({
      code: "forbidden",
      status: 403,
    });
    await expect(engine.invoke(scoped(null), "primitive.delete", kv.id, {})).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(engine.invoke(scoped(null), "group.list", null, {})).rejects.toMatchObject({ code: "forbidden" });
  });

  it("hides primitives of other groups as 404 and refuses other groups with group_mismatch", async () => {
    const { engine, kv, scoped } = await setup();
    await engine.invoke(local, "group.create", null, { name: "other" });
    const outsider = scoped(null, "grp_elsewhere");
    await expect(engine.invoke(outsider, "kv.get", kv.id, { key: "a" })).rejects.toMatchObject({ code: "not_found" });
    await expect(engine.invoke(outsider, "primitive.get", kv.id, {})).rejects.toMatchObject({ code: "not_found" });
    await expect(engine.invoke(scoped(null), "group.get", "other", {})).rejects.toMatchObject({
      code: "group_mismatch",
      status: 403,
    });
    await expect(
      engine.invoke(scoped(["primitive_create"]), "primitive.create", null, { name: "x", type: "kv", group: "other" }),
    ).rejects.toMatchObject({ code: "group_mismatch" });
  });

  it("checks the tool allowlist with glob patterns", async () => {
    const { engine, kv, scoped } = await setup();
    await engine.invoke(local, "kv.set", kv.id, { key: "a", value: 1 });
    await expect(engine.invoke(scoped(["kv_get"]), "kv.get", kv.id, { key: "a" })).resolves.toMatchObject({ value: 1 });
    await expect(engine.invoke(scoped(["kv_get"]), "kv.set", kv.id, { key: "a", value: 2 })).rejects.toMatchObject({
      code: "tool_not_allowed",
      status: 403,
    });
    await expect(engine.invoke(scoped(["kv_*"]), "kv.set", kv.id, { key: "a", value: 2 })).resolves.toMatchObject({
      version: 2,
    });
    await expect(engine.invoke(scoped(["kv_*"]), "primitive.stats", kv.id, {})).resolves.toMatchObject({ items: 1 });
    await expect(engine.invoke(scoped(["kv_set"]), "primitive.stats", kv.id, {})).rejects.toMatchObject({
      code: "tool_not_allowed",
    });
    // Reading the group and getting a primitive need only a key for the group.
    await expect(engine.invoke(scoped([]), "primitive.get", kv.id, {})).resolves.toMatchObject({ id: kv.id });
    await expect(engine.invoke(scoped([]), "group.get", "app", {})).resolves.toMatchObject({ name: "app" });
  });

  it("answers wrong_type naming the type", async () => {
    // A second type, registered only in this test, to call kv routes on.
    const noteDefinition: PrimitiveDefinition<null> = { type: "memory", open: () => null, items: () => 0 };
    const { engine } = await setup({
      definitions: [...PRIMITIVE_DEFINITIONS, noteDefinition as PrimitiveDefinition],
    });
    const mem = await engine.invoke<PrimitiveInfo>(local, "primitive.create", null, {
      name: "notes",
      type: "memory",
      group: "app",
    });
    const err = (await engine.invoke(local, "kv.get", mem.id, { key: "a" }).catch((e: Error) => e)) as Error;
    expect(err).toMatchObject({ code: "wrong_type", status: 400 });
    expect(err.message).toContain("memory");
    expect(err.message).toContain("kv");
    // Export exists for db, kv and storage only: any other type is wrong_type, whatever the allowlist.
    const group = (await engine.invoke<{ id: string }>(local, "group.get", "app", {})).id;
    const noTools: Principal = { kind: "scoped", workspace: "local", actor: "key:k", groupId: group, tools: [] };
    await expect(engine.invoke(noTools, "primitive.export", mem.id, {})).rejects.toMatchObject({ code: "wrong_type" });
  });

  it("refuses data operations on a paused primitive with 423 but still serves info and stats", async () => {
    const { engine, kv } = await setup();
    await engine.services.catalog.updatePrimitive(kv.id, { paused: true });
    await expect(engine.invoke(local, "kv.get", kv.id, { key: "a" })).rejects.toMatchObject({
      code: "paused",
      status: 423,
    });
    await expect(engine.invoke(local, "kv.set", kv.id, { key: "a", value: 1 })).rejects.toMatchObject({
      code: "paused",
    });
    await expect(engine.invoke(local, "primitive.get", kv.id, {})).resolves.toMatchObject({ paused: true });
    await expect(engine.invoke(local, "primitive.stats", kv.id, {})).resolves.toMatchObject({ paused: true, items: 0 });
  });

  it("writes one audit entry per data or lifecycle call", async () => {
    const { engine, kv, scoped } = await setup();
    await engine.invoke(local, "kv.set", kv.id, { key: "k", value: "secret-ish value" });
    await engine.invoke(local, "kv.get", kv.id, { key: "k" });
    await engine.invoke(local, "primitive.get", kv.id, {}); // info read: not audited
    await engine.invoke(scoped(["kv_get"]), "kv.set", kv.id, { key: "k", value: 1 }).catch(() => undefined);
    await engine.services.audit.flush();
    const entries = await engine.services.catalog.listAudit({ limit: 50 });
    expect(entries.map((e) => e.action)).toEqual(["kv.set", "kv.get", "kv.set", "primitive.create", "group.create"]);
    const [denied, get, set, create, groupCreate] = entries;
    expect(set).toMatchObject({
      group: "app",
      primitive: "kv",
      primitive_id: kv.id,
      instance: "cache",
      actor: "local",
      target: "k",
      detail: { version: 1 },
    });
    expect(JSON.stringify(entries)).not.toContain("secret-ish");
    expect(get?.target).toBe("k");
    expect(denied).toMatchObject({ actor: "key:key_test", detail: { error: "tool_not_allowed" } });
    expect(create).toMatchObject({ primitive: "kv", primitive_id: kv.id, instance: "cache" });
    expect(groupCreate).toMatchObject({ primitive: "group", primitive_id: null, instance: null, target: "app" });
    expect(entries[0]?.id).toMatch(/^aud_/);
  });

  it("validates input after policy, naming the field", async () => {
    const { engine, kv } = await setup();
    await expect(engine.invoke(local, "kv.set", kv.id, { key: "a" })).rejects.toMatchObject({
      code: "invalid_request",
      message: "value: required",
    });
  });

  it("keeps the registry's operation names unique", () => {
    const names = OPERATIONS.map((op) => op.name);
    expect(new Set(names).size).toBe(names.length);
    // A definer takes only a name of the wire contract, answering what the contract says.
    const defined = untargetedOp({
      // @ts-expect-error "x" is not in OPERATION_NAMES
      name: "x",
      audited: false,
      metered: false,
      access: "read",
      writesStorage: false,
      input: z.object({}),
      run: () => null,
    });
    expect(defined.name).toBe("x");
    untargetedOp({
      name: "group.find",
      audited: false,
      metered: false,
      access: "read",
      writesStorage: false,
      input: z.object({}),
      // @ts-expect-error group.find answers a Manifest or null, not a number
      run: () => 1,
    });
  });

  it("serves exactly the operations the wire contract names (what MCP tools and REST routes are checked against)", () => {
    expect(OPERATIONS.map((op) => op.name).sort()).toEqual([...OPERATION_NAMES].sort());
  });
});

describe("groups and primitives", () => {
  it("persists the catalog and data across reopen", async () => {
    const { engine, dataDir, clock } = testEngine();
    await engine.invoke(local, "group.create", null, { name: "app" });
    const kv = await engine.invoke<PrimitiveInfo>(local, "primitive.create", null, {
      name: "c",
      type: "kv",
      group: "app",
    });
    await engine.invoke(local, "kv.set", kv.id, { key: "a", value: [1, 2] });
    await engine.close();
    const reopened = testEngine({ dataDir, clock }).engine;
    await expect(reopened.invoke(local, "kv.get", kv.id, { key: "a" })).resolves.toMatchObject({ value: [1, 2] });
    await expect(reopened.invoke(local, "group.get", "app", {})).resolves.toMatchObject({
      primitives: [{ id: kv.id, name: "c", type: "kv", group: "app", paused: false, forked_from: null }],
    });
  });
});
