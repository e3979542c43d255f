// MCP session caps with the official SDK client: a new session past a credential's cap or the
// total cap closes the least recently used idle session, whose id then answers 404 like any
// unknown session; when every session is mid-call, the new one is refused with 429.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Engine, type Principal } from "@prim/engine";
import { createServer, engineDoor } from "@prim/http";
import { afterEach, describe, expect, it } from "vitest";
import { mountMcp } from "../src/index.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A server whose callers are told apart by an `x-actor` header (each an account-level actor). */
async function capped(limits: { perCredential?: number; total?: number }) {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-mcp-caps-"));
  const engine = Engine.openLocal({ dataDir });
  const authenticate = (req: { headers: Record<string, unknown> }): Principal => ({
    kind: "local",
    workspace: "local",
    actor: String(req.headers["x-actor"] ?? "local"),
    groupId: null,
    tools: null,
  });
  const app = createServer({ ...engineDoor(engine), authenticate });
  mountMcp(app, engine, limits);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  cleanups.push(async () => {
    await app.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const connect = async (actor: string) => {
    const client = new Client({ name: "caps-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp/g`), {
      requestInit: { headers: { "x-actor": actor } },
    });
    await client.connect(transport);
    cleanups.push(() => client.close().catch(() => undefined));
    return Object.assign(client, { id: transport.sessionId as string, actor });
  };
  /** The HTTP status a plain `tools/list` on session `id` answers. */
  const statusOf = async (session: { id: string; actor: string }) => {
    const res = await fetch(`${url}/mcp/g`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session.id,
        "x-actor": session.actor,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const body = res.status === 200 ? null : ((await res.json()) as { error: { code: string } });
    if (res.status === 200) await res.body?.cancel();
    return { status: res.status, code: body?.error.code };
  };
  return { url, connect, statusOf };
}

describe("MCP session caps", () => {
  it("closes the credential's least recently used idle session at its cap; others' sessions stay", async () => {
    const s = await capped({ perCredential: 2, total: 100 });
    const a1 = await s.connect("key:a");
    const a2 = await s.connect("key:a");
    const b1 = await s.connect("key:b");
    await a1.listTools(); // a2 is now a's least recently used session
    const a3 = await s.connect("key:a");

    expect(await s.statusOf(a2)).toEqual({ status: 404, code: "not_found" });
    await expect(a2.listTools()).rejects.toThrow();
    for (const live of [a1, a3, b1]) expect((await live.listTools()).tools.length).toBeGreaterThan(20);

    const a4 = await s.connect("key:a"); // a1 was used before a3: a1 goes
    expect((await s.statusOf(a1)).status).toBe(404);
    expect((await a4.listTools()).tools.length).toBeGreaterThan(20);
    expect((await b1.listTools()).tools.length).toBeGreaterThan(20);
  });

  it("at the total cap closes the least recently used idle session of any credential", async () => {
    const s = await capped({ perCredential: 10, total: 3 });
    const a = await s.connect("key:a");
    const b = await s.connect("key:b");
    const c = await s.connect("key:c");
    await a.listTools(); // b is the least recently used
    const d = await s.connect("key:d");
    expect(await s.statusOf(b)).toEqual({ status: 404, code: "not_found" });
    for (const live of [a, c, d]) expect((await s.statusOf(live)).status).toBe(200);
  });

  it("refuses a new session with 429 when every session at the cap is mid-call", async () => {
    const s = await capped({ perCredential: 1, total: 100 });
    const a = await s.connect("key:a");
    await a.callTool({ name: "primitive_create", arguments: { name: "q", type: "queue" } });
    // A long poll keeps the only session busy.
    const parked = a.callTool({ name: "queue_receive", arguments: { primitive: "q", queue: "jobs", wait: "3s" } });
    await new Promise((resolve) => setTimeout(resolve, 300)); // its request is in
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const res = await fetch(`${s.url}/mcp/g`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-actor": "key:a",
      },
      body: JSON.stringify(init),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    expect((await parked).isError).toBeFalsy(); // the busy session was not cut off
    // Once idle, it is the one closed to make room.
    const next = await s.connect("key:a");
    expect((await s.statusOf(a)).status).toBe(404);
    expect((await s.statusOf(next)).status).toBe(200);
  });
});
