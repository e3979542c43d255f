import { describe, expect, it } from "vitest";
import { startMcpServer } from "./helpers.js";

/** `X-Request-Id` on MCP answers too: a session start, a tool call, and a refused request. */
describe("MCP: X-Request-Id on every answer", () => {
  it("initialize, tools/call and a 400 for an invalid group all carry it", async () => {
    const s = await startMcpServer();
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const post = (path: string, body: unknown, extra: Record<string, string> = {}) =>
      fetch(`${s.url}${path}`, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    const init = await post("/mcp/app", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    expect(init.status).toBe(200);
    expect(init.headers.get("x-request-id")).toMatch(/\S/);
    const session = init.headers.get("mcp-session-id") as string;
    await init.text();
    const ids = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    await (await post("/mcp/app", { jsonrpc: "2.0", method: "notifications/initialized" }, ids)).text();
    const call = await post(
      "/mcp/app",
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "primitive_list", arguments: {} } },
      ids,
    );
    expect(call.status).toBe(200);
    expect(call.headers.get("x-request-id")).toMatch(/\S/);
    await call.text();
    const bad = await post("/mcp/Not_Valid!", { jsonrpc: "2.0", id: 1, method: "initialize" });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("x-request-id")).toMatch(/\S/);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
  });
});
