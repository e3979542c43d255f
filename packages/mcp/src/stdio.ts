import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

/** Serves one MCP server on this process's stdin/stdout; resolves when the client hangs up. */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  process.stdin.once("end", () => void transport.close());
  await server.connect(transport);
  await closed;
}

/**
 * Relays stdin/stdout to the MCP endpoint of a running engine (`url` = `.../mcp/<group>`):
 * the engine that owns the data directory answers, so nothing is opened twice.
 */
export async function proxyStdio(url: string, headers: Record<string, string>): Promise<void> {
  const stdio = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const closed = new Promise<void>((resolve) => {
    stdio.onclose = () => resolve();
  });
  remote.onmessage = (message) => {
    // The relay is the HTTP client, so its later requests must carry the version the
    // initialize answer negotiated (MCP-Protocol-Version), as the SDK client's would.
    const version = "result" in message ? (message.result as { protocolVersion?: unknown }).protocolVersion : undefined;
    if (typeof version === "string") remote.setProtocolVersion(version);
    void stdio.send(message);
  };
  remote.onerror = (err) => process.stderr.write(`prim mcp: ${err.message}\n`);
  stdio.onmessage = (message: JSONRPCMessage) => {
    remote.send(message).catch((err: Error) => {
      // A request that could not be relayed still gets an answer.
      if ("id" in message && "method" in message) {
        void stdio.send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32603, message: `the engine at ${url} did not answer: ${err.message}` },
        });
      }
    });
  };
  process.stdin.once("end", () => void stdio.close());
  await remote.start();
  await stdio.start();
  await closed;
  await remote.close();
}
