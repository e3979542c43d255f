// The lookups transports need before naming a target, as operations (ops/lookup.ts): the group
// of an MCP path (group.find, openGroup) and a primitive by id or name (primitive.resolve).

import { LOCAL_PRINCIPAL, openGroup, type Principal } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { testEngine } from "./helpers.js";

const local = LOCAL_PRINCIPAL;

describe("group.find and openGroup", () => {
  it("creates a missing group once (audited as group.create) and finds it after", async () => {
    const { engine } = testEngine();
    expect(await engine.invoke(local, "group.find", null, { name: "g" })).toBeNull();
    const created = await openGroup(engine, local, "g");
    expect(created).toMatchObject({ name: "g", namespace: "local" });
    expect(await openGroup(engine, local, "g")).toEqual(created);
    const [first, second] = await Promise.all([openGroup(engine, local, "h"), openGroup(engine, local, "h")]);
    expect(first.id).toBe(second.id);
    const audit = await engine.invoke<{ data: { action: string; target: string }[] }>(local, "audit.list", null, {});
    expect(
      audit.data
        .filter((e) => e.action === "group.create")
        .map((e) => e.target)
        .sort(),
    ).toEqual(["g", "h"]);
  });

  it("refuses another group to a scoped principal (group_mismatch), creation to anyone not an account", async () => {
    const { engine } = testEngine();
    const mine = await openGroup(engine, local, "mine");
    await openGroup(engine, local, "theirs");
    const scoped: Principal = { kind: "scoped", workspace: "local", actor: "key:k", groupId: mine.id, tools: null };
    expect(await openGroup(engine, scoped, "mine")).toEqual(mine);
    await expect(openGroup(engine, scoped, "theirs")).rejects.toMatchObject({ code: "group_mismatch" });
    await expect(openGroup(engine, scoped, "new")).rejects.toMatchObject({ code: "forbidden" });
    await expect(engine.invoke(local, "group.find", null, { name: "Bad Name" })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});

/** Groups `g` (a kv and a db both called `store`) and `other` (a kv called `elsewhere`). */
async function twoGroups() {
  const { engine } = testEngine();
  const g = await openGroup(engine, local, "g");
  const other = await openGroup(engine, local, "other");
  const create = (name: string, type: string, group: string) =>
    engine.invoke<{ id: string }>(local, "primitive.create", null, { name, type, group });
  const kv = await create("store", "kv", "g");
  const db = await create("store", "db", "g");
  const foreign = await create("elsewhere", "kv", "other");
  return { engine, g, other, kv, db, foreign };
}

describe("primitive.resolve", () => {
  it("finds by id or name within the group, filters by type, refuses ambiguous names and other groups", async () => {
    const { engine, g, other, kv, db, foreign } = await twoGroups();
    const resolve = (ref: string, type?: string) =>
      engine.invoke(local, "primitive.resolve", g.id, { ref, ...(type ? { type } : {}) });

    expect(await resolve("store", "kv")).toEqual({ id: kv.id, type: "kv", name: "store" });
    expect(await resolve(db.id)).toEqual({ id: db.id, type: "db", name: "store" });
    await expect(resolve("store")).rejects.toMatchObject({
      code: "invalid_request",
      message: "primitive: 'store' names 2 primitives (kv, db); pass its id",
    });
    await expect(resolve("nope", "kv")).rejects.toMatchObject({
      code: "not_found",
      message: "kv 'nope' in group 'g' not found",
    });
    await expect(resolve(foreign.id)).rejects.toMatchObject({ code: "not_found" });
    expect(await engine.invoke(local, "primitive.resolve", other.id, { ref: "elsewhere" })).toMatchObject({
      id: foreign.id,
    });
    const scoped: Principal = { kind: "scoped", workspace: "local", actor: "key:k", groupId: other.id, tools: null };
    await expect(engine.invoke(scoped, "primitive.resolve", g.id, { ref: "store" })).rejects.toMatchObject({
      code: "group_mismatch",
    });
  });
});

describe("a primitive named by reference as the target", () => {
  it("resolves inside the call: by name of the op's type or by id, within a group the principal reaches", async () => {
    const { engine, g, other, kv, foreign } = await twoGroups();
    await engine.invoke(local, "kv.set", kv.id, { key: "k", value: 1 });

    const byName = { group: g.id, ref: "store", type: "kv" as const };
    expect(await engine.invoke(local, "kv.get", byName, { key: "k" })).toMatchObject({ value: 1 });
    expect(await engine.invoke(local, "kv.get", { group: "g", ref: kv.id }, { key: "k" })).toMatchObject({ value: 1 });
    // Ambiguous without a type; another group's id is not in this group.
    await expect(engine.invoke(local, "kv.get", { group: g.id, ref: "store" }, { key: "k" })).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(engine.invoke(local, "kv.get", { group: g.id, ref: foreign.id }, { key: "k" })).rejects.toMatchObject({
      code: "not_found",
    });
    // A scoped principal names only its own group.
    const scoped: Principal = { kind: "scoped", workspace: "local", actor: "key:k", groupId: other.id, tools: null };
    await expect(engine.invoke(scoped, "kv.get", byName, { key: "k" })).rejects.toMatchObject({
      code: "group_mismatch",
    });
    // Only a primitive's operation takes a reference.
    await expect(engine.invoke(local, "group.get", byName, {})).rejects.toMatchObject({ code: "invalid_request" });
    // The call is audited on the primitive it resolved to.
    await engine.invoke(local, "kv.get", byName, { key: "k" }, { audit: true });
    const audit = await engine.invoke<{ data: { action: string; primitive_id: string }[] }>(local, "audit.list", null, {
      action: "kv.get",
    });
    expect(audit.data[0]).toMatchObject({ primitive_id: kv.id });
  });
});
