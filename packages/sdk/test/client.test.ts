import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "@prim/engine";
import { createLocalServer } from "@prim/http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrimClient, PrimError } from "../src/index.js";

let close: () => Promise<void>;
let client: PrimClient;

beforeEach(async () => {
  const dir = mkdtempSync(join(tmpdir(), "prim-sdk-"));
  const engine = Engine.openLocal({ dataDir: dir });
  const app = createLocalServer({ engine });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  client = new PrimClient({ baseUrl: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}` });
  close = async () => {
    await app.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  };
});

afterEach(() => close());

describe("PrimClient", () => {
  it("manages groups and primitives", async () => {
    const group = await client.groups.create("app");
    expect(group).toMatchObject({ name: "app", primitives: [] });
    expect((await client.groups.list()).data.map((g) => g.name)).toEqual(["app"]);
    const kv = await client.primitives.create({ name: "cache", type: "kv", group: "app" });
    expect((await client.primitives.get(kv.id)).name).toBe("cache");
    expect((await client.primitives.list({ group: "app", type: "kv" })).data).toHaveLength(1);
    expect((await client.primitives.update(kv.id, { name: "store" })).name).toBe("store");
    expect((await client.primitives.stats(kv.id)).items).toBe(0);
    await client.primitives.delete(kv.id);
    await client.groups.delete("app");
    expect((await client.groups.list()).data).toEqual([]);
  });

  it("covers every kv route", async () => {
    await client.groups.create("app");
    const kv = client.kv((await client.primitives.create({ name: "c", type: "kv", group: "app" })).id);
    expect((await kv.set("a/b c", { x: 1 }, { ttl: "1h" })).expires_at).not.toBeNull();
    expect((await kv.get("a/b c")).value).toEqual({ x: 1 });
    expect(await kv.find("missing")).toBeNull();
    await kv.set("bin", Buffer.from("hi").toString("base64"), { encoding: "bytes" });
    await expect(kv.set("a/b c", 2, { ifVersion: 7 })).rejects.toMatchObject({
      code: "precondition_failed",
      status: 412,
    });
    const mset = await kv.mset([
      { key: "m1", value: 1 },
      { key: "m2", value: 2, ttl: "5m" },
    ]);
    expect(mset.data.map((e) => e.key)).toEqual(["m1", "m2"]);
    expect((await kv.mget(["m2", "nope"])).data.map((e) => e?.value ?? null)).toEqual([2, null]);
    expect((await kv.incr("n", { by: 3 })).value).toBe(3);
    expect((await kv.list({ prefix: "m" })).data.map((e) => e.key)).toEqual(["m1", "m2"]);
    const all = [];
    for await (const entry of kv.iterate({ values: true })) all.push(entry.key);
    expect(all).toEqual(["a/b c", "bin", "m1", "m2", "n"]);
    expect(await kv.mdelete(["m1", "m2"])).toEqual({ deleted: 2 });
    expect(await kv.delete("n", { ifVersion: 1 })).toEqual({ deleted: true });
  });

  it("raises PrimError with code, status and request id", async () => {
    const err = await client.groups.get("missing").catch((e) => e);
    expect(err).toBeInstanceOf(PrimError);
    expect(err).toMatchObject({ status: 404, code: "not_found" });
    expect(err.requestId).toMatch(/^req_/);
  });
});

describe("PrimClient storage", () => {
  it("puts, reads, lists, copies, presigns and deletes objects", async () => {
    await client.groups.create("app");
    const s = client.storage((await client.primitives.create({ name: "files", type: "storage", group: "app" })).id);
    const info = await s.put("docs/a.txt", "hello world", { contentType: "text/plain", metadata: { owner: "ada" } });
    expect(info).toMatchObject({ key: "docs/a.txt", size: 11, content_type: "text/plain", metadata: { owner: "ada" } });
    expect(Buffer.from(await s.bytes("docs/a.txt")).toString()).toBe("hello world");
    const part = await s.get("docs/a.txt", { range: "bytes=6-" });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("world");
    expect((await s.get("docs/a.txt", { ifNoneMatch: info.etag })).status).toBe(304);
    expect((await s.stat("docs/a.txt")).etag).toBe(info.etag);
    await expect(s.put("docs/a.txt", "x", { createOnly: true })).rejects.toMatchObject({ code: "precondition_failed" });
    expect((await s.copy("docs/a.txt", "docs/b.txt")).size).toBe(11);
    expect((await s.list({ prefix: "docs/" })).data.map((o) => o.key)).toEqual(["docs/a.txt", "docs/b.txt"]);
    const signed = await s.presign("docs/a.txt", { expiresIn: "5m" });
    expect(await (await fetch(signed.url)).text()).toBe("hello world");
    await s.revokeSigned();
    expect((await fetch(signed.url)).status).toBe(403);
    await s.delete("docs/a.txt");
    await expect(s.stat("docs/a.txt")).rejects.toMatchObject({ status: 404 });
  });
});
