import { describe, expect, it } from "vitest";
import { startMcpServer } from "./helpers.js";

describe("MCP over Streamable HTTP", () => {
  it("initializes, lists every tool, and creates the path's group on first use", async () => {
    const s = await startMcpServer();
    const client = await s.connect("agents");
    expect(client.getServerVersion()?.name).toBe("prim");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "primitive_list",
        "primitive_create",
        "primitive_snapshot",
        "primitive_fork",
        "changes_read",
        "db_query",
        "db_exec",
        "db_branch",
        "fs_read",
        "fs_write",
        "fs_search",
        "fs_fork",
        "queue_send",
        "queue_receive",
        "queue_ack",
        "memory_remember",
        "memory_recall",
        "memory_forget",
        "vault_list",
        "vault_use",
        "vault_request_secret",
        "kv_get",
        "kv_list",
        "kv_set",
        "kv_delete",
        "storage_list",
        "storage_read",
        "storage_write",
        "storage_sign",
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
    }
    expect(await s.engine.services.catalog.getGroup("agents")).not.toBeNull();
  });

  it("narrows tools with tools= and refuses calls outside them", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g", "?tools=kv_*,db_query");
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["db_query", "kv_delete", "kv_get", "kv_list", "kv_set", "primitive_list"]);
    // A Prim tool outside the allowlist: the spec's tool_not_allowed, as a tool error result.
    const refused = await s.call(client, "db_exec", { primitive: "x", sql: "SELECT 1" });
    expect(refused).toMatchObject({ isError: true, data: { error: { code: "tool_not_allowed" } } });
    expect(refused.data.error.message).toContain("db_exec");
    expect(JSON.parse(refused.text as string)).toEqual(refused.data);
    // A name Prim has no tool for stays a JSON-RPC error.
    const unknown = await client.callTool({ name: "no_such_tool", arguments: {} }).catch((e) => e);
    expect(String(unknown.message ?? JSON.stringify(unknown))).toMatch(/no_such_tool not found/);
  });

  it("db_query stays read-only even when db_exec is allowed", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    expect((await s.call(client, "primitive_create", { name: "main", type: "db" })).isError).toBe(false);
    expect((await s.call(client, "db_exec", { primitive: "main", sql: "CREATE TABLE t (x)" })).isError).toBe(false);
    const write = await s.call(client, "db_query", { primitive: "main", sql: "INSERT INTO t VALUES (1)" });
    expect(write.isError).toBe(true);
    expect(write.data.error.code).toBe("forbidden");
    expect(JSON.parse(write.text as string)).toEqual(write.data);
    const read = await s.call(client, "db_query", { primitive: "main", sql: "SELECT count(*) AS n FROM t" });
    expect(read.data.rows).toEqual([{ n: 0 }]);
  });

  it("binds a session to its group path: its id answers 404 under another path", async () => {
    const s = await startMcpServer();
    const client = await s.connect("one");
    const sessionId = client.http.sessionId as string;
    const res = await fetch(`${s.url}/mcp/two`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("not_found");
  });

  it("answers 400 for an invalid group name, and applies local auth", async () => {
    const s = await startMcpServer({ rootToken: "t0p" });
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const noToken = await fetch(`${s.url}/mcp/ok`, { method: "POST", headers, body: JSON.stringify(init) });
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as any).error.code).toBe("invalid_token");
    expect(noToken.headers.get("x-request-id")).toBeTruthy();
    const wrongToken = await fetch(`${s.url}/mcp/ok`, {
      method: "POST",
      headers: { ...headers, authorization: "Bearer nope" },
      body: JSON.stringify(init),
    });
    expect(wrongToken.status).toBe(401);
    expect(((await wrongToken.json()) as any).error.code).toBe("invalid_token");
    const auth = { ...headers, authorization: "Bearer t0p" };
    const bad = await fetch(`${s.url}/mcp/Not_Valid!`, { method: "POST", headers: auth, body: JSON.stringify(init) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.code).toBe("invalid_request");
    const cross = await fetch(`${s.url}/mcp/ok`, {
      method: "POST",
      headers: { ...auth, origin: "https://evil.example" },
      body: JSON.stringify(init),
    });
    expect(cross.status).toBe(403);
    expect(((await cross.json()) as any).error.code).toBe("forbidden");
    expect(cross.headers.get("x-request-id")).toBeTruthy();
    const ok = await s.connect("ok", "", { authorization: "Bearer t0p" });
    expect((await ok.listTools()).tools.length).toBeGreaterThan(20);
  });

  it("returns errors as isError results with { error: { code, message } }", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const missing = await s.call(client, "kv_get", { primitive: "nope", key: "a" });
    expect(missing).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
    const badArgs = await s.call(client, "kv_set", { primitive: "nope", key: "a", value: 1, bogus: true });
    expect(badArgs).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(badArgs.data.error.message).toContain("bogus");
  });

  it("audits every tool call, info reads included", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    await s.call(client, "primitive_create", { name: "cache", type: "kv" });
    await s.call(client, "primitive_list", {});
    await s.call(client, "primitive_snapshot", { primitive: "cache", action: "list" });
    await s.call(client, "kv_get", { primitive: "cache", key: "missing" });
    await s.engine.services.audit.flush();
    const entries = await s.engine.services.catalog.listAudit({ group: "g", limit: 50 });
    expect(entries.map((e) => [e.action, e.actor, e.detail?.error ?? null])).toEqual([
      ["kv.get", "local", "not_found"],
      ["primitive.snapshots", "local", null],
      ["primitive.list", "local", null],
      ["primitive.create", "local", null],
      ["group.create", "local", null],
    ]);
  });
});
