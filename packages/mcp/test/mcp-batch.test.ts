// JSON-RPC batches on the Streamable HTTP endpoint, sent with raw fetch (the SDK client never
// batches). The SDK's server transport (1.32.2) accepts a batch under every protocol version and
// hands each message to the server separately; all answers come back on one SSE stream.
import { expect, it } from "vitest";
import { forEachInvoker, startMcpServer } from "./helpers.js";

const BASE_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** The JSON-RPC messages of a response: SSE `data:` lines, or a JSON body. */
async function messages(res: Response): Promise<any[]> {
  const text = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return text
      .split("\n")
      .filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "")
      .map((line) => JSON.parse(line.slice(5)));
  }
  const body = JSON.parse(text);
  return Array.isArray(body) ? body : [body];
}

/** Initializes a session by hand; returns the headers every later request needs. */
async function session(url: string, protocolVersion: string) {
  const init = await fetch(url, {
    method: "POST",
    headers: BASE_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "batch-test", version: "1" } },
    }),
  });
  expect(init.status).toBe(200);
  const sessionId = init.headers.get("mcp-session-id") as string;
  expect(sessionId).toBeTruthy();
  const [answer] = await messages(init);
  const negotiated = answer.result.protocolVersion as string;
  const headers = { ...BASE_HEADERS, "mcp-session-id": sessionId, "mcp-protocol-version": negotiated };
  const initialized = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  expect(initialized.status).toBe(202);
  return { headers, negotiated };
}

const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

async function setup(protocolVersion: string) {
  const s = await startMcpServer();
  const url = `${s.url}/mcp/g`;
  const { headers, negotiated } = await session(url, protocolVersion);
  const post = (body: unknown) => fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const created = await messages(await post(toolCall(1, "primitive_create", { name: "cache", type: "kv" })));
  expect(created[0].result.isError).toBeUndefined();
  return { s, url, headers, negotiated, post };
}

forEachInvoker("MCP JSON-RPC batches", () => {
  for (const version of ["2025-03-26", "2025-06-18"]) {
    it(`processes each call of a batch separately (protocol ${version})`, async () => {
      const { negotiated, post } = await setup(version);
      expect(negotiated).toBe(version);
      const res = await post([
        toolCall(10, "kv_set", { primitive: "cache", key: "a", value: { n: 1 } }),
        toolCall(11, "kv_get", { primitive: "cache", key: "missing" }),
      ]);
      expect(res.status).toBe(200);
      const answers = await messages(res);
      expect(answers.map((m) => m.id).sort()).toEqual([10, 11]);
      const byId = new Map(answers.map((m) => [m.id, m.result]));
      // The failing call does not fail the other one.
      expect(byId.get(10).isError).toBeUndefined();
      expect(byId.get(10).structuredContent).toMatchObject({ key: "a", value: { n: 1 }, version: 1 });
      expect(byId.get(11)).toMatchObject({ isError: true, structuredContent: { error: { code: "not_found" } } });
    });
  }

  it("answers a batch mixing a protocol error (unknown tool) and a good call, one answer each", async () => {
    const { post } = await setup("2025-06-18");
    const res = await post([
      toolCall(20, "no_such_tool", {}),
      toolCall(21, "kv_set", { primitive: "cache", key: "b", value: 2 }),
      { jsonrpc: "2.0", id: 22, method: "ping" },
    ]);
    expect(res.status).toBe(200);
    const answers = await messages(res);
    const byId = new Map(answers.map((m) => [m.id, m]));
    expect(byId.size).toBe(3);
    expect(byId.get(20).error.code).toBe(-32602);
    expect(byId.get(21).result.structuredContent).toMatchObject({ key: "b", value: 2 });
    expect(byId.get(22).result).toEqual({});
  });

  it("runs the calls of a batch through the engine: both writes land and are audited", async () => {
    const { s, post } = await setup("2025-03-26");
    const res = await post([
      toolCall(30, "kv_set", { primitive: "cache", key: "x", value: "one" }),
      toolCall(31, "kv_set", { primitive: "cache", key: "y", value: "two" }),
    ]);
    expect((await messages(res)).every((m) => m.result?.isError === undefined)).toBe(true);
    const list = await messages(await post(toolCall(32, "kv_list", { primitive: "cache", values: true })));
    expect(list[0].result.structuredContent.data.map((e: { key: string }) => e.key)).toEqual(["x", "y"]);
    const audit = await s.audit();
    expect(
      audit
        .filter((e) => e.action === "kv.set")
        .map((e) => e.target)
        .sort(),
    ).toEqual(["x", "y"]);
  });

  it("a batch of notifications only is accepted with 202; a batch with initialize is refused", async () => {
    const { s, post } = await setup("2025-06-18");
    const notes = await post([
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999 } },
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
    ]);
    expect(notes.status).toBe(202);
    // A batch that re-initializes an existing session is refused by the transport.
    const again = await post([
      {
        jsonrpc: "2.0",
        id: 40,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      },
    ]);
    expect(again.status).toBe(400);
    // A new session cannot start with a batch holding initialize and another request.
    const fresh = await fetch(`${s.url}/mcp/g`, {
      method: "POST",
      headers: BASE_HEADERS,
      body: JSON.stringify([
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
        },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
      ]),
    });
    expect(fresh.status).toBe(400);
    expect(((await fresh.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});
