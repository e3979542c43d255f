import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

const INFO_FIELDS = ["created_at", "durability", "forked_from", "group", "id", "name", "paused", "size_bytes", "type"];

describe("groups", () => {
  it("creates, lists, gets and deletes groups", async () => {
    const { api, workspace } = await startServer();
    const created = await api("POST", "/v1/groups", { name: "app" });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["created_at", "id", "name", "namespace", "primitives"]);
    expect(created.body).toMatchObject({ name: "app", namespace: workspace, primitives: [] });
    expect(created.body.id).toMatch(/^grp_/);
    expect((await api("POST", "/v1/groups", { name: "app" })).body.error.code).toBe("already_exists");
    expect((await api("POST", "/v1/groups", { name: "app" })).status).toBe(409);
    const bad = await api("POST", "/v1/groups", { name: "Bad Name" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^name:/);
    expect((await api("GET", "/v1/groups/app")).body).toEqual(created.body);
    expect((await api("GET", `/v1/groups/${created.body.id}`)).body.name).toBe("app");
    expect((await api("GET", "/v1/groups/missing")).status).toBe(404);
    expect((await api("DELETE", "/v1/groups/app")).status).toBe(204);
    expect((await api("GET", "/v1/groups/app")).status).toBe(404);
  });

  it("refuses names in an id's form, so an id and a name never match two groups or primitives", async () => {
    const { api } = await startServer();
    const app = (await api("POST", "/v1/groups", { name: "app" })).body;
    const other = (await api("POST", "/v1/groups", { name: "other" })).body;
    // A group named like another group's id would have shadowed it (id = $1 OR name = $1).
    for (const name of [app.id, other.id]) {
      const refused = await api("POST", "/v1/groups", { name });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: "invalid_request",
        message: expect.stringMatching(/^name:.*group id/),
      });
    }
    expect((await api("GET", `/v1/groups/${other.id}`)).body.name).toBe("other");
    expect((await api("GET", "/v1/groups/other")).body.id).toBe(other.id);
    // Names merely like the prefix are fine (the rightful caller's success).
    expect((await api("POST", "/v1/groups", { name: "grp_reports" })).status).toBe(201);

    const kv = (await api("POST", "/v1/primitives", { name: "cache", type: "kv", group: app.id })).body;
    expect(kv.group).toBe("app");
    const ulidName = await api("POST", "/v1/primitives", { name: kv.id, type: "kv", group: "app" });
    expect(ulidName.status).toBe(400);
    expect(ulidName.body.error.message).toMatch(/^name:.*primitive id/);
    const rename = await api("PATCH", `/v1/primitives/${kv.id}`, { name: other.id.slice(4) });
    expect(rename.status).toBe(400);
    const fork = await api("POST", `/v1/primitives/${kv.id}/fork`, { name: kv.id });
    expect(fork.status).toBe(400);
    expect((await api("PATCH", `/v1/primitives/${kv.id}`, { name: "cache-2" })).body.name).toBe("cache-2");
  });

  it("pages the Manifest list", async () => {
    const { api } = await startServer();
    for (const name of ["c", "a", "b"]) await api("POST", "/v1/groups", { name });
    const first = await api("GET", "/v1/groups?limit=2");
    expect(first.body.data.map((g: { name: string }) => g.name)).toEqual(["a", "b"]);
    expect(Object.keys(first.body.data[0]).sort()).toEqual(["created_at", "id", "name", "namespace"]);
    const second = await api("GET", `/v1/groups?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toMatchObject({ data: [{ name: "c" }], next_cursor: null });
    expect((await api("GET", "/v1/groups?limit=201")).status).toBe(400);
  });

  it("refuses to delete a non-empty group unless force=true, which deletes its primitives", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "app" });
    const kv = (await api("POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body;
    await api("PUT", `/v1/primitives/${kv.id}/keys/a`, { value: 1 });
    const refused = await api("DELETE", "/v1/groups/app");
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect((await api("GET", `/v1/primitives/${kv.id}/keys/a`)).status).toBe(200);
    expect((await api("DELETE", "/v1/groups/app?force=true")).status).toBe(204);
    expect((await api("GET", `/v1/primitives/${kv.id}`)).status).toBe(404);
    await api("POST", "/v1/groups", { name: "app" });
    const again = (await api("POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body;
    expect((await api("GET", `/v1/primitives/${again.id}/keys/a`)).status).toBe(404);
  });
});

describe("primitives", () => {
  it("creates a primitive with the PrimitiveInfo shape", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "app" });
    const res = await api("POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(INFO_FIELDS);
    expect(res.body).toMatchObject({ name: "cache", type: "kv", group: "app", paused: false, forked_from: null });
    expect(res.body.id).toMatch(/^[0-9a-z]{26}$/);
    expect(res.body.size_bytes).toBeGreaterThan(0);
    expect((await api("GET", `/v1/primitives/${res.body.id}`)).body).toMatchObject({ id: res.body.id, name: "cache" });
    expect((await api("GET", "/v1/groups/app")).body.primitives).toHaveLength(1);
  });

  it("validates create and reports clashes", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "app" });
    await api("POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    const clash = await api("POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("already_exists");
    expect(
      (await api("POST", "/v1/primitives", { name: "cache", type: "blob", group: "app" })).body.error.message,
    ).toMatch(/^type:/);
    expect((await api("POST", "/v1/primitives", { name: "-x", type: "kv", group: "app" })).status).toBe(400);
    expect((await api("POST", "/v1/primitives", { name: "x", type: "kv" })).body.error.message).toBe("group: required");
    const noGroup = await api("POST", "/v1/primitives", { name: "x", type: "kv", group: "nope" });
    expect(noGroup.status).toBe(404);
    expect(noGroup.body.error.message).toContain("nope");
  });

  it("lists with type and group filters, paged", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "a" });
    await api("POST", "/v1/groups", { name: "b" });
    for (const [name, group] of [
      ["one", "a"],
      ["two", "a"],
      ["three", "b"],
    ]) {
      await api("POST", "/v1/primitives", { name, type: "kv", group });
    }
    expect((await api("GET", "/v1/primitives")).body.data.map((p: { name: string }) => p.name)).toEqual([
      "one",
      "two",
      "three",
    ]);
    expect((await api("GET", "/v1/primitives?group=b")).body.data.map((p: { name: string }) => p.name)).toEqual([
      "three",
    ]);
    expect((await api("GET", "/v1/primitives?type=kv&limit=2")).body.next_cursor).not.toBeNull();
    expect((await api("GET", "/v1/primitives?type=db")).body).toEqual({ data: [], next_cursor: null });
    expect((await api("GET", "/v1/primitives?type=nope")).status).toBe(400);
    expect((await api("GET", "/v1/primitives?group=zzz")).status).toBe(404);
  });

  it("renames and moves, keeping the id, with 409 already_exists on a clash", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "a" });
    await api("POST", "/v1/groups", { name: "b" });
    const p = (await api("POST", "/v1/primitives", { name: "one", type: "kv", group: "a" })).body;
    await api("POST", "/v1/primitives", { name: "two", type: "kv", group: "b" });
    await api("PUT", `/v1/primitives/${p.id}/keys/k`, { value: "kept" });
    const renamed = await api("PATCH", `/v1/primitives/${p.id}`, { name: "uno" });
    expect(renamed.body).toMatchObject({ id: p.id, name: "uno", group: "a" });
    const moved = await api("PATCH", `/v1/primitives/${p.id}`, { group: "b" });
    expect(moved.body).toMatchObject({ id: p.id, name: "uno", group: "b" });
    const clash = await api("PATCH", `/v1/primitives/${p.id}`, { name: "two" });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("already_exists");
    expect((await api("PATCH", `/v1/primitives/${p.id}`, { group: "nowhere" })).status).toBe(404);
    expect((await api("GET", `/v1/primitives/${p.id}/keys/k`)).body.value).toBe("kept");
  });

  it("deletes a primitive and its data with 204", async () => {
    const { api, engine } = await startServer();
    await api("POST", "/v1/groups", { name: "a" });
    const p = (await api("POST", "/v1/primitives", { name: "one", type: "kv", group: "a" })).body;
    expect((await api("DELETE", `/v1/primitives/${p.id}`)).status).toBe(204);
    expect((await api("GET", `/v1/primitives/${p.id}`)).status).toBe(404);
    expect((await api("GET", `/v1/primitives/${p.id}/keys/a`)).status).toBe(404);
    expect(engine.services.files.sizeBytes(p.id)).toBe(0);
    expect((await api("GET", "/v1/primitives/not-an-id")).body.error.code).toBe("not_found");
  });

  it("reports stats: unexpired keys and the size on disk", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "a" });
    const p = (await api("POST", "/v1/primitives", { name: "one", type: "kv", group: "a" })).body;
    await api("POST", `/v1/primitives/${p.id}/mset`, {
      items: Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: "v".repeat(1000) })),
    });
    const stats = await api("GET", `/v1/primitives/${p.id}/stats`);
    expect(Object.keys(stats.body).sort()).toEqual([
      "durability",
      "id",
      "items",
      "name",
      "paused",
      "size_bytes",
      "type",
    ]);
    expect(stats.body).toMatchObject({ id: p.id, name: "one", type: "kv", items: 50, paused: false });
    expect(stats.body.size_bytes).toBeGreaterThan(50_000);
    expect((await api("GET", `/v1/primitives/${p.id}`)).body.size_bytes).toBe(stats.body.size_bytes);
  });

  it("answers 423 on data routes of a paused primitive while info and stats still work", async () => {
    const { api, engine } = await startServer();
    await api("POST", "/v1/groups", { name: "a" });
    const p = (await api("POST", "/v1/primitives", { name: "one", type: "kv", group: "a" })).body;
    await engine.services.catalog.updatePrimitive(p.id, { paused: true });
    const res = await api("GET", `/v1/primitives/${p.id}/keys`);
    expect(res.status).toBe(423);
    expect(res.body.error.code).toBe("paused");
    expect((await api("PUT", `/v1/primitives/${p.id}/keys/a`, { value: 1 })).status).toBe(423);
    expect((await api("GET", `/v1/primitives/${p.id}`)).body.paused).toBe(true);
    expect((await api("GET", `/v1/primitives/${p.id}/stats`)).body.paused).toBe(true);
  });

  it("sets a primitive's durability with PATCH, shown in info, lists and stats; null goes back to the engine's", async () => {
    const { api } = await startServer();
    await api("POST", "/v1/groups", { name: "a" });
    const p = (await api("POST", "/v1/primitives", { name: "one", type: "kv", group: "a" })).body;
    // The engine's setting: fast locally, durable in the cloud.
    const engine = p.durability as string;
    expect(["fast", "durable"]).toContain(engine);
    const other = engine === "fast" ? "durable" : "fast";
    const patched = await api("PATCH", `/v1/primitives/${p.id}`, { durability: other });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: p.id, name: "one", durability: other });
    expect((await api("GET", `/v1/primitives/${p.id}`)).body.durability).toBe(other);
    expect((await api("GET", `/v1/primitives/${p.id}/stats`)).body.durability).toBe(other);
    expect((await api("GET", "/v1/primitives?group=a")).body.data[0].durability).toBe(other);
    expect((await api("GET", "/v1/groups/a")).body.primitives[0].durability).toBe(other);
    // Writes still work and are read back under either setting.
    expect((await api("PUT", `/v1/primitives/${p.id}/keys/k`, { value: 1 })).status).toBe(200);
    expect((await api("GET", `/v1/primitives/${p.id}/keys/k`)).body.value).toBe(1);
    // A rename leaves the setting alone.
    expect((await api("PATCH", `/v1/primitives/${p.id}`, { name: "renamed" })).body.durability).toBe(other);

    const bad = await api("PATCH", `/v1/primitives/${p.id}`, { durability: "sometimes" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_request", message: expect.stringMatching(/^durability:/) });
    expect((await api("GET", `/v1/primitives/${p.id}`)).body.durability).toBe(other);

    const reset = await api("PATCH", `/v1/primitives/${p.id}`, { durability: null });
    expect(reset.status).toBe(200);
    expect(reset.body.durability).toBe(engine);
  });
});
