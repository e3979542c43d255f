// Which POSTs are answered with plain JSON (json-calls.ts) and which keep the SDK's SSE stream,
// over both invokers: a plain call is one JSON object, a call asking for progress and a tool that
// may elicit stream, and the official client takes either.
import { expect, it } from "vitest";
import { forEachInvoker, startMcpServer } from "./helpers.js";

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A raw session on `/mcp/app`: `post` sends one JSON-RPC message with the session's headers. */
async function rawSession(url: string) {
  const post = (body: unknown, extra: Record<string, string> = {}) =>
    fetch(`${url}/mcp/app`, { method: "POST", headers: { ...HEADERS, ...extra }, body: JSON.stringify(body) });
  const init = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
  });
  expect(init.status).toBe(200);
  const ids = { "mcp-session-id": init.headers.get("mcp-session-id") as string, "mcp-protocol-version": "2025-06-18" };
  await init.text();
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, ids)).text();
  return { ids, post: (body: unknown, extra: Record<string, string> = {}) => post(body, { ...ids, ...extra }) };
}

/** The JSON-RPC messages of an SSE answer's `data:` lines. */
const events = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);

forEachInvoker("MCP: JSON answers where no stream is needed", () => {
  it("a tools/call is one JSON object with the session id; tools/list and an unknown tool too", async () => {
    const s = await startMcpServer();
    const { ids, post } = await rawSession(s.url);
    const call = await post({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "primitive_list", arguments: {} },
    });
    expect(call.status).toBe(200);
    expect(call.headers.get("content-type")).toBe("application/json");
    expect(call.headers.get("mcp-session-id")).toBe(ids["mcp-session-id"]);
    expect(call.headers.get("x-request-id")).toMatch(/\S/);
    const answer = (await call.json()) as { jsonrpc: string; id: number; result: { isError?: boolean } };
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: 7 });
    expect(answer.result.isError).toBeUndefined();
    const list = await post({ jsonrpc: "2.0", id: "l", method: "tools/list" });
    expect(list.headers.get("content-type")).toBe("application/json");
    expect(((await list.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    const unknown = await post({
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "nope", arguments: {} },
    });
    expect(await unknown.json()).toMatchObject({ id: 8, error: { code: -32602 } });
  });

  it("a call with a progress token, a streaming tool and a batch keep the SSE stream", async () => {
    const s = await startMcpServer();
    const { post } = await rawSession(s.url);
    const withProgress = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "primitive_list", arguments: {}, _meta: { progressToken: "p" } },
    });
    expect(withProgress.headers.get("content-type")).toBe("text/event-stream");
    expect(events(await withProgress.text()).at(-1)).toMatchObject({ id: 1 });
    const secret = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "vault_request_secret", arguments: { primitive: "none", name: "X" } },
    });
    expect(secret.headers.get("content-type")).toBe("text/event-stream");
    expect(events(await secret.text()).at(-1)).toMatchObject({ id: 2, result: { isError: true } });
    const batch = await post([{ jsonrpc: "2.0", id: 3, method: "ping" }]);
    expect(batch.headers.get("content-type")).toBe("text/event-stream");
    expect(events(await batch.text())).toEqual([{ jsonrpc: "2.0", id: 3, result: {} }]);
  });

  it("requests the SDK refuses are still its answers (unsupported protocol version, Accept)", async () => {
    const s = await startMcpServer();
    const { post } = await rawSession(s.url);
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    expect((await post(ping, { "mcp-protocol-version": "1999-01-01" })).status).toBe(400);
    expect((await post(ping, { accept: "application/json" })).status).toBe(406);
  });

  it("the official client takes both answers: a plain call (JSON) and one with progress (SSE)", async () => {
    const s = await startMcpServer();
    const client = await s.connect("app");
    expect((await client.callTool({ name: "primitive_list", arguments: {} })).isError).toBeFalsy();
    const progressed = await client.callTool({ name: "primitive_list", arguments: {} }, undefined, {
      onprogress: () => {},
    });
    expect(progressed.isError).toBeFalsy();
  });
});
