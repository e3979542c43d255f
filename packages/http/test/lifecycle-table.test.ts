import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { ADAPTERS } from "./lifecycle-types.js";

async function withPrimitive(type: string) {
  const s = await startServer();
  await s.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  await s.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "other" });
  const p = await s.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: "src",
    type,
    group: "app",
  });
  return { s, p, base: `/v1/primitives/${p.id}` };
}

describe.each(ADAPTERS)("lifecycle of a $type primitive", (adapter) => {
  it("snapshot → write → restore gives back exactly the snapshot's data, under the same id", async () => {
    const { s, p, base } = await withPrimitive(adapter.type);
    await adapter.setup?.(s, base);
    for (let n = 1; n <= 3; n++) await adapter.write(s, base, n);
    const before = await adapter.state(s, base);
    const snap = await s.api("POST", `${base}/snapshots`, { name: "three" });
    expect(snap.status).toBe(201);
    expect(snap.body).toEqual({
      id: expect.stringMatching(/^snap_/),
      name: "three",
      created_at: s.clock.now(),
      primitive: p.id,
    });
    for (let n = 4; n <= 6; n++) await adapter.write(s, base, n);
    expect(await adapter.state(s, base)).not.toEqual(before);
    const restored = await s.api("POST", `${base}/restore`, { snapshot: "three" });
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual(snap.body);
    expect(await adapter.state(s, base)).toEqual(before);
    expect((await s.api("GET", base)).body.id).toBe(p.id);
    // Writable after the restore, and restorable by id too.
    await adapter.write(s, base, 7);
    expect((await s.api("POST", `${base}/restore`, { snapshot: snap.body.id })).status).toBe(200);
    expect(await adapter.state(s, base)).toEqual(before);
  });

  it("fork → diverge: the copy has the data, a new id and forked_from; each side changes alone", async () => {
    const { s, p, base } = await withPrimitive(adapter.type);
    await adapter.setup?.(s, base);
    for (let n = 1; n <= 2; n++) await adapter.write(s, base, n);
    const original = await adapter.state(s, base);
    const fork = await s.api("POST", `${base}/fork`, {});
    expect(fork.status).toBe(201);
    expect(fork.body.id).not.toBe(p.id);
    expect(fork.body.name).toMatch(/^src-fork-[a-z0-9]{6}$/);
    expect(fork.body).toMatchObject({ type: adapter.type, group: "app", paused: false });
    expect(fork.body.forked_from).toEqual({ id: p.id, name: "src", type: adapter.type, group: "app", snapshot: null });
    const forkBase = `/v1/primitives/${fork.body.id}`;
    expect(await adapter.state(s, forkBase)).toEqual(original);
    await adapter.write(s, forkBase, 10);
    expect(await adapter.state(s, base)).toEqual(original);
    await adapter.write(s, base, 11);
    const forkState = await adapter.state(s, forkBase);
    expect(forkState).not.toEqual(original);
    expect(forkState).not.toEqual(await adapter.state(s, base));
  });

  it("forks from a snapshot into another group, and stats count items", async () => {
    const { s, p, base } = await withPrimitive(adapter.type);
    await adapter.setup?.(s, base);
    await adapter.write(s, base, 1);
    const snap = (await s.api("POST", `${base}/snapshots`, {})).body;
    const atSnapshot = await adapter.state(s, base);
    await adapter.write(s, base, 2);
    const fork = await s.api("POST", `${base}/fork`, { name: "copy", group: "other", snapshot: snap.id });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({ name: "copy", group: "other" });
    expect(fork.body.forked_from).toEqual({
      id: p.id,
      name: "src",
      type: adapter.type,
      group: "app",
      snapshot: snap.id,
    });
    expect(await adapter.state(s, `/v1/primitives/${fork.body.id}`)).toEqual(atSnapshot);
    const stats = await s.api("GET", `${base}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ id: p.id, name: "src", type: adapter.type, paused: false });
    expect(stats.body.items).toBeGreaterThanOrEqual(1);
    expect(stats.body.size_bytes).toBeGreaterThan(0);
  });
});
