import { createWorkspace } from "@prim/db";
import { PrimClient, PrimError } from "@prim/sdk";
import { startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The SDK against the cloud: the same client as against `prim dev`, with an API key as `token`.
let cloud: TestCloud;
let prim: PrimClient;

beforeAll(async () => {
  cloud = await startCloud("sdk");
  const { key } = await createWorkspace(cloud.api.hub.pool, { name: "Acme", plan: "pro" });
  prim = new PrimClient({ baseUrl: cloud.url, token: key });
});
afterAll(() => cloud?.stop());

describe("the SDK against the cloud", () => {
  it("reaches a workspace's data with its API key, every type through one client", async () => {
    await prim.groups.create("app");
    const create = async (type: "kv" | "db" | "queue" | "storage") =>
      (await prim.primitives.create({ name: `${type}-1`, type, group: "app" })).id;
    const kv = prim.kv(await create("kv"));
    await kv.set("user/1", { name: "Ada" });
    expect((await kv.get("user/1")).value).toEqual({ name: "Ada" });

    const db = prim.db(await create("db"));
    await db.exec("CREATE TABLE t (n INTEGER)");
    await db.batch([{ sql: "INSERT INTO t VALUES (?)", params: [1] }, { sql: "INSERT INTO t VALUES (2)" }]);
    expect((await db.query("SELECT sum(n) AS s FROM t")).rows).toEqual([{ s: 3 }]);

    const queue = prim.queue(await create("queue"));
    await queue.send("jobs", { n: 1 });
    const [job] = await queue.receive("jobs", { wait: "1s" });
    expect(job?.body).toEqual({ n: 1 });
    expect((await queue.ack("jobs", job as NonNullable<typeof job>)).status).toBe("done");

    const storage = prim.storage(await create("storage"));
    await storage.put("a.txt", "hello cloud", { contentType: "text/plain" });
    const url = await storage.presign("a.txt");
    expect(url.url.startsWith(`${cloud.url}/v1/signed/`)).toBe(true);
    expect(await (await prim.signed.get(url.url, { range: "bytes=6-" })).text()).toBe("cloud");

    const trail = [];
    for await (const entry of prim.audit.iterate({ action: "kv.*", limit: 1 })) trail.push(entry);
    expect(trail.map((e) => e.action)).toEqual(["kv.get", "kv.set"]); // newest first, one page at a time
    expect(trail[0]?.actor).toMatch(/^key:key_/);
  });

  it("throws PrimError 401 invalid_token with a request id for a wrong key", async () => {
    const stranger = new PrimClient({ baseUrl: cloud.url, token: `pk_${"1".repeat(32)}` });
    const err = await stranger.groups.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrimError);
    expect(err).toMatchObject({ status: 401, code: "invalid_token", requestId: expect.stringMatching(/^req_/) });
  });

  it("mints a narrower key, lists it and revokes it with its subtree (prim.keys)", async () => {
    // An agent that hands keys on needs the key tools in its allowlist, beside its data tools.
    const minted = await prim.keys.mint({ name: "agent", group: "app", tools: ["kv_get", "key_*"] });
    expect(minted).toMatchObject({ name: "agent", group: "app", tools: ["kv_get", "key_*"], read_only: false });
    const agent = new PrimClient({ baseUrl: cloud.url, token: minted.key });
    const grandchild = await agent.keys.mint({ name: "sub-agent", read_only: true });
    expect(grandchild).toMatchObject({ tools: ["kv_get", "key_*"], read_only: true, parent: minted.id });
    const wider = await agent.keys.mint({ tools: ["kv_set"] }).catch((err: unknown) => err);
    expect(wider).toBeInstanceOf(PrimError);
    expect(wider).toMatchObject({ status: 403, code: "forbidden" });
    expect((await prim.keys.list()).map((k) => k.id)).toEqual(expect.arrayContaining([minted.id, grandchild.id]));
    expect((await agent.keys.list()).map((k) => k.id)).toEqual([grandchild.id]);
    expect(await prim.keys.revoke(minted.id)).toMatchObject({ id: minted.id, revoked: [minted.id, grandchild.id] });
    await expect(agent.keys.list()).rejects.toMatchObject({ status: 401, code: "invalid_token" });
  });
});

describe("a cloud with a public URL", () => {
  it("names it in the OpenAPI document and in presigned URLs", async () => {
    const publicCloud = await startCloud("sdk-public", { PRIM_PUBLIC_API_URL: "https://api.prim.example" });
    try {
      const { key } = await createWorkspace(publicCloud.api.hub.pool, { name: "Pub" });
      const client = new PrimClient({ baseUrl: publicCloud.url, token: key });
      const doc = (await (await fetch(`${publicCloud.url}/v1/openapi.json`)).json()) as { servers: unknown };
      expect(doc.servers).toEqual([{ url: "https://api.prim.example" }]);
      await client.groups.create("app");
      const { id } = await client.primitives.create({ name: "s", type: "storage", group: "app" });
      await client.storage(id).put("k", "v");
      const signed = await client.storage(id).presign("k");
      const url = new URL(signed.url);
      expect(url.origin).toBe("https://api.prim.example");
      // The same path at the server's own address is the working signed URL.
      expect(await (await fetch(`${publicCloud.url}${url.pathname}`)).text()).toBe("v");
    } finally {
      await publicCloud.stop();
    }
  });
});
