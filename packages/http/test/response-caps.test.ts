import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { startServer, type TestServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

// The cap this file checks, stated rather than imported: 8 MiB per multi-item answer. An answer
// may pass it by the misestimate of one item's fixed fields, never by a whole value.
const CAP = 8 * 1024 * 1024;
const CEILING = CAP + 64 * 1024;
const MiB_STRING = "x".repeat(1_000_000); // JSON text of 1,000,002 bytes: under kv's 1 MiB value limit

async function create(server: TestServer, type: string): Promise<PrimitiveInfo> {
  const groups = await server.engine.invoke<{ data: { name: string }[] }>(LOCAL_PRINCIPAL, "group.list", null, {});
  if (groups.data.length === 0) await server.engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  return server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
    name: `big-${type}`,
    type,
    group: "app",
  });
}

async function bigKv(server: TestServer, count: number) {
  const kv = await create(server, "kv");
  const keys = Array.from({ length: count }, (_, i) => `k${String(i).padStart(3, "0")}`);
  for (const key of keys) {
    await server.engine.invoke(LOCAL_PRINCIPAL, "kv.set", kv.id, { key, value: `${key}:${MiB_STRING}` });
  }
  return { kv, keys };
}

describe("kv answers stay within 8 MiB", () => {
  it("mget of 40 values of 1 MiB answers the keys that fit, in request order, with truncated: true", async () => {
    const server = await startServer();
    const { kv, keys } = await bigKv(server, 40);
    const asked = ["missing", ...keys.slice().reverse()];
    const first = await server.api("POST", `/v1/primitives/${kv.id}/mget`, { keys: asked });
    expect(first.status).toBe(200);
    expect(first.text.length).toBeLessThanOrEqual(CEILING);
    expect(first.body.truncated).toBe(true);
    expect(first.body.data.length).toBeGreaterThanOrEqual(6);
    expect(first.body.data.length).toBeLessThan(asked.length);
    expect(first.body.data[0]).toBeNull();
    first.body.data.slice(1).forEach((entry: any, i: number) => {
      expect(entry.key).toBe(asked[i + 1]);
      expect(entry.value).toBe(`${asked[i + 1]}:${MiB_STRING}`);
    });
    // Asking again for the rest gets everything, each answer within the cap.
    let rest = asked.slice(first.body.data.length);
    let answered = first.body.data.length;
    while (rest.length > 0) {
      const next = await server.api("POST", `/v1/primitives/${kv.id}/mget`, { keys: rest });
      expect(next.text.length).toBeLessThanOrEqual(CEILING);
      expect(next.body.data.length).toBeGreaterThan(0);
      expect(next.body.data.map((e: any) => e.key)).toEqual(rest.slice(0, next.body.data.length));
      expect(next.body.truncated).toBe(next.body.data.length < rest.length);
      answered += next.body.data.length;
      rest = rest.slice(next.body.data.length);
    }
    expect(answered).toBe(asked.length);
  });

  it("mget that fits says truncated: false", async () => {
    const server = await startServer();
    const { kv } = await bigKv(server, 2);
    const small = await server.api("POST", `/v1/primitives/${kv.id}/mget`, { keys: ["k000", "nope", "k001"] });
    expect(small.body.truncated).toBe(false);
    expect(small.body.data.map((e: any) => e?.key ?? null)).toEqual(["k000", null, "k001"]);
  });

  it("counts bytes values at their base64 size", async () => {
    const server = await startServer();
    const kv = await create(server, "kv");
    const raw = Buffer.alloc(1_000_000, 7).toString("base64"); // 1 MB of bytes, 1.33 MB as base64
    const keys = Array.from({ length: 12 }, (_, i) => `b${i}`);
    for (const key of keys) {
      await server.engine.invoke(LOCAL_PRINCIPAL, "kv.set", kv.id, { key, value: raw, encoding: "bytes" });
    }
    const res = await server.api("POST", `/v1/primitives/${kv.id}/mget`, { keys });
    expect(res.text.length).toBeLessThanOrEqual(CEILING);
    expect(res.body.truncated).toBe(true);
    expect(res.body.data.length).toBe(6); // 6 x 1.33 MB fit in 8 MiB, 7 do not (counted raw, 8 would)
    expect(res.body.data[5].value).toBe(raw);
  });

  it("GET /keys?values=true ends a page at the cap with next_cursor; paging returns every key once", async () => {
    const server = await startServer();
    const { kv, keys } = await bigKv(server, 30);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `values=true&limit=1000${cursor === null ? "" : `&cursor=${cursor}`}`;
      const page = await server.api("GET", `/v1/primitives/${kv.id}/keys?${query}`);
      expect(page.status).toBe(200);
      expect(page.text.length).toBeLessThanOrEqual(CEILING);
      expect(Object.keys(page.body).sort()).toEqual(["data", "next_cursor"]);
      for (const entry of page.body.data) {
        expect(entry.value).toBe(`${entry.key}:${MiB_STRING}`);
        seen.push(entry.key);
      }
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(keys);
    expect(pages).toBeGreaterThanOrEqual(4);
    // Without values the same listing is one page.
    const names = await server.api("GET", `/v1/primitives/${kv.id}/keys?limit=1000`);
    expect(names.body.data.map((e: any) => e.key)).toEqual(keys);
    expect(names.body.next_cursor).toBeNull();
  });
});

describe("queue answers stay within 8 MiB", () => {
  const BODY = "q".repeat(250_000); // a body near the 256 KiB limit

  async function bigQueue(server: TestServer, count: number) {
    const queue = await create(server, "queue");
    for (let i = 0; i < count; i++) {
      await server.engine.invoke(LOCAL_PRINCIPAL, "queue.send", queue.id, { queue: "jobs", body: `${i}:${BODY}` });
    }
    return queue;
  }

  it("receive with max 100 leases only the jobs its answer can carry; the rest stay ready", async () => {
    const server = await startServer();
    const queue = await bigQueue(server, 45);
    const res = await server.api("POST", `/v1/primitives/${queue.id}/queues/jobs/receive`, { max: 100 });
    expect(res.status).toBe(200);
    expect(res.text.length).toBeLessThanOrEqual(CEILING);
    const received = res.body.data.length;
    expect(received).toBeGreaterThanOrEqual(25);
    expect(received).toBeLessThan(45);
    expect(res.body.data.every((job: any) => typeof job.lease_token === "string")).toBe(true);
    const ready = await server.api("GET", `/v1/primitives/${queue.id}/queues/jobs/messages?status=ready&limit=200`);
    const leased = await server.api("GET", `/v1/primitives/${queue.id}/queues/jobs/messages?status=leased&limit=200`);
    const count = async (first: any, status: string) => {
      let n = first.body.data.length;
      let cursor = first.body.next_cursor;
      while (cursor !== null) {
        const page = await server.api(
          "GET",
          `/v1/primitives/${queue.id}/queues/jobs/messages?status=${status}&limit=200&cursor=${cursor}`,
        );
        n += page.body.data.length;
        cursor = page.body.next_cursor;
      }
      return n;
    };
    expect(await count(leased, "leased")).toBe(received);
    expect(await count(ready, "ready")).toBe(45 - received);
  });

  it("a job list ends its page at the cap; paging returns every job once, in send order", async () => {
    const server = await startServer();
    const queue = await bigQueue(server, 45);
    const bodies: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `limit=200${cursor === null ? "" : `&cursor=${cursor}`}`;
      const page = await server.api("GET", `/v1/primitives/${queue.id}/queues/jobs/messages?${query}`);
      expect(page.text.length).toBeLessThanOrEqual(CEILING);
      for (const job of page.body.data) bodies.push(job.body.split(":")[0]);
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(2);
    expect(bodies).toEqual(Array.from({ length: 45 }, (_, i) => String(i)));
  });
});

describe("memory answers stay within 8 MiB", () => {
  it("a memory list ends its page at the cap (text measured as JSON, escapes included)", async () => {
    const server = await startServer();
    const memory = await create(server, "memory");
    // 32,000 quotes: 64 KB once escaped in JSON, so 200 of them make 12.8 MB.
    const text = '"'.repeat(32_000);
    for (let i = 0; i < 200; i++) {
      await server.engine.invoke(LOCAL_PRINCIPAL, "memory.remember", memory.id, { kind: "fact", text: `${i}${text}` });
    }
    const ids = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `limit=200${cursor === null ? "" : `&cursor=${cursor}`}`;
      const page = await server.api("GET", `/v1/primitives/${memory.id}/memories?${query}`);
      expect(page.status).toBe(200);
      expect(page.text.length).toBeLessThanOrEqual(CEILING);
      for (const record of page.body.data) ids.add(record.id);
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(2);
    expect(ids.size).toBe(200);
  });
});

describe("the caps are documented in the OpenAPI document", () => {
  it("states the answer cap, the depth limit and mget's truncation", async () => {
    const { api } = await startServer();
    const doc = (await api("GET", "/v1/openapi.json")).body;
    expect(doc.info.description).toContain("8 MiB");
    expect(doc.info.description).toContain("128 levels");
    expect(doc.paths["/v1/primitives/{id}/mget"].post.description).toContain("truncated");
  });
});
