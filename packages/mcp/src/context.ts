import { Readable } from "node:stream";
import type { Manifest, Principal, Target } from "@prim/wire";
import { ServiceError } from "@prim/wire";

/** Largest file, object or value a tool returns inline (base64); larger reads need a signed URL. */
export const MAX_INLINE_BYTES = 1024 * 1024;

/** What a tool call runs with. */
export interface ToolContext {
  /** The caller, narrowed to the tool being called. */
  principal: Principal;
  group: Manifest;
  /** The engine's own base URL (signed URLs are absolute). */
  baseUrl: string;
  /**
   * `invoker.invoke` for this caller, audited (every MCP tool call leaves an audit entry);
   * `audit: false` for the further calls one tool call makes (a wait polling a request).
   */
  invoke<T = unknown>(op: string, target: Target, input: unknown, options?: { audit?: boolean }): Promise<T>;
  /** The page where a person answers secret request `request` of vault `primitive` (absolute URL). */
  secretRequestUrl(primitive: string, request: string): string;
  /**
   * Asks the client to show the person a URL (URL-mode elicitation); absent when the client did
   * not declare `elicitation.url`. `complete` sends `notifications/elicitation/complete`.
   */
  elicitUrl?: (params: {
    message: string;
    url: string;
    elicitationId: string;
  }) => Promise<{ action: "accept" | "decline" | "cancel"; complete: () => Promise<void> }>;
  /** Progress while a call waits (when the client asked for it with a progress token). */
  progress?: (message: string) => Promise<void>;
  /** Aborted when the client cancels the call or goes away. */
  signal?: AbortSignal;
}

/**
 * The bytes of a read (inline, or a stream) if they fit a tool result; past the cap, refuses
 * with `hint` (the way to get them instead) and never reads the stream.
 */
export async function readCapped(body: Readable | Buffer, size: number, what: string, hint: string): Promise<Buffer> {
  if (size > MAX_INLINE_BYTES) {
    if (!Buffer.isBuffer(body)) body.destroy();
    throw new ServiceError(
      "payload_too_large",
      `${what} is ${size} bytes; tools return at most ${MAX_INLINE_BYTES} bytes inline. ${hint}`,
    );
  }
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Bytes as a tool returns them: `{ text }` when they are valid UTF-8, else `{ base64 }`. */
export function encodeBytes(bytes: Buffer): { text: string } | { base64: string } {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? { text } : { base64: bytes.toString("base64") };
}

/** A write's body from the tool's `content` and `encoding` arguments, as the operation takes it. */
export function contentBody(args: { content?: string; encoding?: "utf8" | "base64" }): {
  body: Readable;
  content_length: number;
} {
  const bytes = decodeContent(args.content ?? "", args.encoding);
  return { body: Readable.from([bytes]), content_length: bytes.length };
}

/** Decodes a tool's `content` argument (`encoding` utf8 or base64). */
function decodeContent(content: string, encoding: "utf8" | "base64" | undefined): Buffer {
  if (encoding === "base64") {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(content) || content.length % 4 === 1) {
      throw new ServiceError("invalid_request", "content: not valid base64");
    }
    return Buffer.from(content, "base64");
  }
  return Buffer.from(content, "utf8");
}
