import type { IncomingMessage, ServerResponse } from "node:http";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { TOOLS } from "./tools/index.js";

/**
 * Tools whose call may talk to the client while it runs (progress, URL-mode elicitation): their
 * POST keeps the SDK's SSE answer, where those messages travel on the call's own stream.
 */
const STREAMING_TOOLS = new Set(TOOLS.filter((tool) => tool.streams === true).map((tool) => tool.name));

/**
 * The one JSON-RPC request of a POST that is answered with plain JSON (`application/json`, one
 * response object) instead of an SSE stream, or undefined when the SDK's transport keeps it:
 * - an `initialize` (the session's start), a batch, notifications and responses;
 * - a call carrying `_meta.progressToken` (the client asked for progress on the call's stream);
 * - `tools/call` of a streaming tool (`ToolSpec.streams`: it may elicit or report progress);
 * - anything the SDK would refuse (Accept without both types, another Content-Type, an
 *   unsupported `Mcp-Protocol-Version`, a malformed message): it answers its own errors.
 * The Streamable HTTP spec lets the server pick either answer per POST; clients accept both.
 */
export function jsonCallOf(req: IncomingMessage, body: unknown): JSONRPCRequest | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  if (jsonrpc !== "2.0" || typeof method !== "string" || method === "initialize") return undefined;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isInteger(id)))) return undefined;
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) {
    return undefined;
  }
  const fields = params as Record<string, unknown> | undefined;
  const meta = fields?._meta;
  if (meta !== undefined && (typeof meta !== "object" || meta === null || "progressToken" in meta)) return undefined;
  if (method === "tools/call" && (typeof fields?.name !== "string" || STREAMING_TOOLS.has(fields.name))) {
    return undefined;
  }
  const accept = req.headers.accept;
  if (accept === undefined || !accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return undefined;
  }
  if (req.headers["content-type"]?.split(";")[0]?.trim().toLowerCase() !== "application/json") return undefined;
  const version = req.headers["mcp-protocol-version"];
  if (version !== undefined && (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) {
    return undefined;
  }
  return params === undefined ? { jsonrpc, id, method } : { jsonrpc, id, method, params: fields };
}

/**
 * The transport an MCP session's server is connected to: the SDK's Streamable HTTP transport
 * (sessions, SSE answers, the GET event stream, DELETE) plus JSON answers written straight to the
 * Node response (`answerJson`), without the SDK's per-request Web Request/Response and
 * ReadableStream conversion. Messages the server sends for a JSON-answered call other than its
 * response (none expected: such calls are the ones that neither stream nor elicit) go to the
 * session's GET event stream, as messages unrelated to a request do.
 */
export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  private readonly pending = new Map<RequestId, ServerResponse>();

  constructor(readonly sse: StreamableHTTPServerTransport) {}

  get sessionId(): string | undefined {
    return this.sse.sessionId;
  }

  async start(): Promise<void> {
    const closed = this.sse.onclose;
    this.sse.onclose = () => {
      closed?.();
      this.failPending();
      this.onclose?.();
    };
    this.sse.onerror = (error) => this.onerror?.(error);
    this.sse.onmessage = (message, extra) => this.onmessage?.(message, extra);
    await this.sse.start();
  }

  /** Hands `call` to the server; its response is written to `res` as one JSON object. */
  answerJson(call: JSONRPCRequest, req: IncomingMessage, res: ServerResponse): void {
    this.pending.set(call.id, res);
    res.once("close", () => {
      if (this.pending.get(call.id) === res) this.pending.delete(call.id);
    });
    this.onmessage?.(call, { requestInfo: { headers: req.headers } });
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = "result" in message || "error" in message ? message.id : options?.relatedRequestId;
    const res = id === undefined ? undefined : this.pending.get(id);
    if (res === undefined) return this.sse.send(message, options);
    if (!("result" in message || "error" in message)) return this.sse.send(message); // the GET stream
    this.pending.delete(id as RequestId);
    const body = JSON.stringify(message);
    // With its length (not chunked): the head and the body leave in one write.
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
    };
    if (this.sessionId !== undefined) headers["mcp-session-id"] = this.sessionId;
    res.writeHead(200, headers).end(body);
  }

  close(): Promise<void> {
    return this.sse.close();
  }

  /** The session closed with calls in flight: each answers as a closed session does (404). */
  private failPending(): void {
    for (const res of this.pending.values()) {
      if (res.headersSent) continue;
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
    }
    this.pending.clear();
  }
}
