import { jsonNestsDeeperThan, LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { mountMcp } from "@prim/mcp";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { createLocalServer } from "../src/index.js";

/** `[[[…0…]]]` nested `depth` levels, as text (JSON.stringify itself would overflow). */
const nestedArray = (depth: number) => `${"[".repeat(depth)}0${"]".repeat(depth)}`;
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}0${"}".repeat(depth)}`;

async function withEveryType() {
  const server = await startServer();
  const { engine } = server;
  await engine.invoke(LOCAL_PRINCIPAL, "group.create", null, { name: "app" });
  const create = (type: string) =>
    engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, { name: `p-${type}`, type, group: "app" });
  const [kv, queue, memory, db] = [
    await create("kv"),
    await create("queue"),
    await create("memory"),
    await create("db"),
  ];
  return { ...server, kv, queue, memory, db };
}

describe("JSON depth limit (128 levels, the body counting as one)", () => {
  it("answers 400 invalid_request for a kv value, queue body, memory metadata or db params nested 6,000 deep", async () => {
    const { api, kv, queue, memory, db } = await withEveryType();
    const deep = nestedArray(6000);
    const bodies: [string, string][] = [
      [`/v1/primitives/${kv.id}/keys/a`, `{"value":${deep}}`],
      [`/v1/primitives/${queue.id}/queues/jobs/messages`, `{"body":${deep}}`],
      [`/v1/primitives/${memory.id}/memories`, `{"kind":"fact","text":"x","metadata":{"m":${nestedObject(6000)}}}`],
      [`/v1/primitives/${db.id}/query`, `{"sql":"select ?","params":[${deep}]}`],
    ];
    for (const [path, body] of bodies) {
      const method = path.includes("/keys/") ? "PUT" : "POST";
      const res = await api(method, path, body);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("128 levels") });
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    }
    // Nothing was stored, and the server still answers.
    expect((await api("GET", `/v1/primitives/${kv.id}/keys/a`)).status).toBe(404);
    expect((await api("GET", "/health")).status).toBe(200);
  });

  it("accepts exactly 128 levels and refuses 129", async () => {
    const { api, kv } = await withEveryType();
    // The body object is level 1, so the value may nest 127 deep.
    const ok = await api("PUT", `/v1/primitives/${kv.id}/keys/edge`, `{"value":${nestedArray(127)}}`);
    expect(ok.status).toBe(200);
    const back = await api("GET", `/v1/primitives/${kv.id}/keys/edge`);
    expect(JSON.stringify(back.body.value)).toBe(nestedArray(127));
    const over = await api("PUT", `/v1/primitives/${kv.id}/keys/edge`, `{"value":${nestedArray(128)}}`);
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe("invalid_request");
  });

  it("counts brackets inside strings as text, escaped quotes included", async () => {
    const { api, kv } = await withEveryType();
    const value = `\\"${"[".repeat(5000)}{{{\\\\`;
    const res = await api("PUT", `/v1/primitives/${kv.id}/keys/s`, `{"value":"${value}"}`);
    expect(res.status).toBe(200);
    expect(res.body.value).toBe(`"${"[".repeat(5000)}{{{\\`);
  });

  it("covers the MCP endpoint, which shares the server's JSON parser", async () => {
    const server = await startServer();
    const app = createLocalServer({ engine: server.engine });
    mountMcp(app, server.engine);
    await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = app.server.address() as { port: number };
      const params = `{"name":"kv_set","arguments":{"value":${nestedArray(6000)}}}`;
      const res = await fetch(`http://127.0.0.1:${address.port}/mcp/app`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`,
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      expect(await res.json()).toEqual({
        error: { code: "invalid_request", message: expect.stringContaining("128 levels") },
      });
    } finally {
      await app.close();
    }
  });
});

describe("jsonNestsDeeperThan", () => {
  it("scans without recursion: a million levels neither overflow nor pass", () => {
    expect(jsonNestsDeeperThan(nestedArray(1_000_000), 128)).toBe(true);
    expect(jsonNestsDeeperThan(nestedObject(128), 128)).toBe(false);
    expect(jsonNestsDeeperThan(nestedObject(129), 128)).toBe(true);
  });

  it("ignores brackets in strings, with any run of backslashes before a quote", () => {
    expect(jsonNestsDeeperThan(`["${"[".repeat(500)}"]`, 2)).toBe(false);
    expect(jsonNestsDeeperThan(`["\\"${"[".repeat(500)}"]`, 2)).toBe(false);
    expect(jsonNestsDeeperThan(`["\\\\",[[[0]]]]`, 3)).toBe(true);
    expect(jsonNestsDeeperThan(`["\\\\\\"[[[",[0]]`, 2)).toBe(false);
    // Siblings do not add up: depth is nesting, not a count of brackets.
    expect(jsonNestsDeeperThan(`[${"[0],".repeat(10_000)}[0]]`, 2)).toBe(false);
  });
});
