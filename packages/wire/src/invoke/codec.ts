import { Readable } from "node:stream";
import { ERROR_STATUS, type ErrorCode, ServiceError, toServiceError } from "../errors.js";
import type { Principal } from "../principal.js";
import type { Target } from "../types.js";

/**
 * The wire format of `POST /internal/invoke` (the remote `Invoker`), shared by the client
 * (`RemoteInvoker`, packages/mcp) and the server (packages/http `internal-invoke.ts`).
 *
 * Request body (JSON): `{ principal, op, target, input, meta: { requestId?, audit?, hops? } }`.
 * Answer: 200 `{ result }`, or the error's own status with `{ error: { code, message, headers? } }`
 * — the same code, message and status a local call would have thrown (unknown faults are 500
 * `internal_error` with the fixed message, no internals).
 *
 * Values that are not JSON travel as tagged objects under the key `$prim`:
 * - `{ $prim: "buffer", base64 }`: a Buffer/Uint8Array; decoded to a Buffer.
 * - `{ $prim: "stream", base64 }`: a Readable, read whole by the sender; decoded to a Readable.
 * - `{ $prim: "stream", omitted: true, bytes }`: a Readable past `maxStreamBytes` (an answer's
 *   stream is sent inline only up to that cap, as MCP tools never return more than 1 MiB
 *   inline); decoded to a Readable that fails with 413 when read. A reader that checks the
 *   declared size first (every MCP tool does) never reads it.
 * - `{ $prim: "object", value }`: a plain object that itself has a `$prim` key (user data such
 *   as a kv value), so that it is never mistaken for a tag.
 * Everything else is JSON.stringify's own rendering (`toJSON` honoured; symbol keys dropped, as
 * the MCP server drops them too).
 */
export interface WireRequest {
  principal: Principal;
  op: string;
  target: Target;
  input: unknown;
  meta: { requestId?: string; audit?: boolean; hops?: number };
}

export type WireAnswer =
  | { result: unknown }
  | { error: { code: string; message: string; headers?: Record<string, string> } };

/** A stream in an answer is sent inline up to this many bytes (the MCP inline cap is 1 MiB). */
export const WIRE_STREAM_BYTES = 1024 * 1024;

const TAG = "$prim";

/** `value` with Buffers and streams replaced by their tags (streams are read, up to `maxStreamBytes`). */
export async function encodeWire(value: unknown, maxStreamBytes = Number.POSITIVE_INFINITY): Promise<unknown> {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Uint8Array) return { [TAG]: "buffer", base64: Buffer.from(value).toString("base64") };
  if (value instanceof Readable) return encodeStream(value, maxStreamBytes);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return encodeWire(toJSON.call(value), maxStreamBytes);
  if (Array.isArray(value)) return Promise.all(value.map((v) => encodeWire(v, maxStreamBytes)));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== undefined && typeof v !== "function" && typeof v !== "symbol")
      out[key] = await encodeWire(v, maxStreamBytes);
  }
  return TAG in out ? { [TAG]: "object", value: out } : out;
}

async function encodeStream(stream: Readable, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    if (size > maxBytes) {
      stream.destroy();
      return { [TAG]: "stream", omitted: true, bytes: size };
    }
    chunks.push(bytes);
  }
  return { [TAG]: "stream", base64: Buffer.concat(chunks).toString("base64") };
}

/** The inverse of `encodeWire`. */
export function decodeWire(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(decodeWire);
  const record = value as Record<string, unknown>;
  const tag = record[TAG];
  if (tag === "buffer") return Buffer.from(String(record.base64), "base64");
  if (tag === "stream") {
    if (record.omitted === true) {
      const refusal = new ServiceError(
        "payload_too_large",
        `the stream is over ${WIRE_STREAM_BYTES} bytes, the most a remote invoke carries inline`,
      );
      return new Readable({
        read() {
          this.destroy(refusal);
        },
      });
    }
    return Readable.from([Buffer.from(String(record.base64), "base64")]);
  }
  const inner = tag === "object" ? (record.value as Record<string, unknown>) : record;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(inner)) out[key] = decodeWire(v);
  return out;
}

/** An error as the wire carries it (unknown faults become 500 `internal_error`, no internals). */
export function errorToWire(err: unknown): { status: number; body: WireAnswer } {
  const error = toServiceError(err);
  const headers = Object.keys(error.headers).length === 0 ? {} : { headers: { ...error.headers } };
  return { status: error.status, body: { error: { code: error.code, message: error.message, ...headers } } };
}

/** The ServiceError a wire error stands for: same code, message, status and headers. */
export function errorFromWire(
  status: number,
  error: { code?: unknown; message?: unknown; headers?: unknown },
): ServiceError {
  const code =
    typeof error.code === "string" && error.code in ERROR_STATUS ? (error.code as ErrorCode) : "internal_error";
  const message = typeof error.message === "string" ? error.message : "internal error; safe to retry";
  const headers =
    typeof error.headers === "object" && error.headers !== null ? (error.headers as Record<string, string>) : undefined;
  return new ServiceError(code, message, { status, headers });
}
