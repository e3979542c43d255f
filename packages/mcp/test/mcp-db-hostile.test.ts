// db_query with parameters nested too deep, from a session allowed only db_query: a tool error
// with the spec's code, and every db keeps answering afterwards.
import { expect, it } from "vitest";
import { forEachInvoker, ok, startMcpServer } from "./helpers.js";

/** The JSON-RPC answer in a Streamable HTTP response (a JSON body or an SSE `data:` line). */
function rpcAnswer(text: string): any {
  const data = text.split("\n").find((line) => line.startsWith("data: "));
  return JSON.parse(data === undefined ? text : data.slice("data: ".length));
}

forEachInvoker("MCP db_query: hostile parameters", (mode) => {
  // The depth limit is the REST host's JSON guard (packages/http), absent from the remote runs' MCP-only app.
  it.skipIf(mode === "remote")(
    "answers invalid_request for params nested 6000 deep and leaves every db usable",
    async () => {
      const s = await startMcpServer();
      const admin = await s.connect("g");
      await ok(s, admin, "primitive_create", { name: "a", type: "db" });
      await ok(s, admin, "primitive_create", { name: "b", type: "db" });
      await ok(s, admin, "db_exec", { primitive: "b", sql: "CREATE TABLE t (v)" });

      const reader = await s.connect("g", "?tools=db_query");
      // The SDK client would refuse to serialise such arguments itself: send the frame raw.
      const depth = 6000;
      const params = `[${"[".repeat(depth)}1${"]".repeat(depth)}]`;
      const body = `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"db_query","arguments":{"primitive":"a","sql":"select ?","params":${params}}}}`;
      const res = await fetch(`${s.url}/mcp/g?tools=db_query`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": reader.http.sessionId as string,
          "mcp-protocol-version": reader.http.protocolVersion ?? "2025-06-18",
        },
        body,
      });
      const answer = rpcAnswer(await res.text());
      // Either the tool's error result, or (if a JSON depth limit refuses the frame first) a
      // JSON-RPC error: never an internal error, never a hang.
      if (answer.result !== undefined) {
        expect(answer.result.isError).toBe(true);
        expect(answer.result.structuredContent.error.code).toBe("invalid_request");
      } else {
        expect(answer.error.code).not.toBe(-32603);
      }

      expect((await ok(s, reader, "db_query", { primitive: "a", sql: "SELECT 2 AS two" })).rows).toEqual([{ two: 2 }]);
      await ok(s, admin, "db_exec", { primitive: "b", sql: "INSERT INTO t VALUES ('after')" });
      expect((await ok(s, reader, "db_query", { primitive: "b", sql: "SELECT v FROM t" })).rows).toEqual([
        { v: "after" },
      ]);
      expect((await ok(s, reader, "db_query", { primitive: "b", action: "tables" })).data).toEqual([
        { name: "t", type: "table" },
      ]);
    },
  );
});
