import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { ServiceError } from "@prim/wire";
import { errorToWire } from "@prim/wire/invoke";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type Dispatcher, Pool } from "undici";
import { secretMatcher } from "./shared-secret.js";

/*
 * Forwarding between cells (CLOUD.md, "Scale-out"): a process that receives a request for a
 * workspace another cell serves hands the HTTP request, as it came, to that cell's internal
 * listener under `/internal/forward/…`; the bodies stream both ways (an upload is never held
 * whole), and the answer — status, headers, `X-Request-Id` — is the owner's. The owner
 * authenticates the caller's credential again; the shared secret only vouches for the hop and
 * for the client address the first process saw.
 */

export const FORWARD_PREFIX = "/internal/forward";
const SECRET_HEADER = "x-prim-cell-secret";
const HOPS_HEADER = "x-prim-hops";
const CLIENT_IP_HEADER = "x-prim-client-ip";
/** Headers of one connection, never passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  SECRET_HEADER,
  HOPS_HEADER,
  CLIENT_IP_HEADER,
]);

export interface Forwarded {
  /** The address the first process saw. */
  clientIp: string;
  /** How many cells the request passed before this one. */
  hops: number;
}

const FORWARDED = Symbol("prim.forwarded");
type Marked = IncomingMessage & { [FORWARDED]?: Forwarded };

/** Answers `err` in the spec's error shape on a raw response (outside Fastify's error handling). */
function writeError(res: ServerResponse, err: ServiceError, requestId?: string): void {
  const { status, body } = errorToWire(err);
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (requestId !== undefined) headers["x-request-id"] = requestId;
  res.writeHead(status, headers).end(JSON.stringify(body));
}

/** What the forwarding process vouched for, when this request came through a forward. */
export function forwardedOf(raw: IncomingMessage): Forwarded | undefined {
  return (raw as Marked)[FORWARDED];
}

/**
 * The owner's side, run by the internal listener for `/internal/forward/…`: checks the hop's
 * secret, strips the prefix and the hop headers, marks the request and hands it to `serve`
 * (the public app's router). A wrong secret answers 401 and serves nothing.
 */
export function acceptForward(
  secret: string,
  serve: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const matches = secretMatcher(secret);
  return (req, res) => {
    const given = req.headers[SECRET_HEADER];
    if (!matches(typeof given === "string" ? given : undefined)) {
      writeError(res, new ServiceError("invalid_token", "a forward needs the cells' shared secret"));
      req.resume();
      return;
    }
    const hops = Number(req.headers[HOPS_HEADER]);
    const clientIp = req.headers[CLIENT_IP_HEADER];
    (req as Marked)[FORWARDED] = {
      clientIp: typeof clientIp === "string" && clientIp !== "" ? clientIp : (req.socket.remoteAddress ?? ""),
      hops: Number.isInteger(hops) && hops > 0 ? hops : 1,
    };
    for (const name of [SECRET_HEADER, HOPS_HEADER, CLIENT_IP_HEADER]) delete req.headers[name];
    req.url = (req.url ?? "/").slice(FORWARD_PREFIX.length) || "/";
    serve(req, res);
  };
}

/** One connection pool per cell (keep-alive; each request on its own connection), and its path. */
const pools = new Map<string, { pool: Pool; base: string }>();

function poolFor(cellUrl: string): { pool: Pool; base: string } {
  let entry = pools.get(cellUrl);
  if (entry === undefined) {
    const url = new URL(cellUrl);
    entry = {
      pool: new Pool(url.origin, { connections: 128, keepAliveTimeout: 10_000 }),
      base: `${url.pathname.replace(/\/+$/, "")}${FORWARD_PREFIX}`,
    };
    pools.set(cellUrl, entry);
  }
  return entry;
}

function passOn(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** Whether a request carries a body to stream on (RFC 9112 §6.3: a length or a transfer coding). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers["content-length"];
  return headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/**
 * The forwarding side: takes the reply over and streams the request to `cellUrl`'s internal
 * listener, and its answer back (an undici pool per cell). A cell that does not answer is 500
 * `internal_error` (safe to retry: nothing reached it), in the spec's error shape with this
 * request's id.
 */
export function forwardRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  target: {
    cellUrl: string;
    secret: string;
    clientIp: string;
    /** Called when the cell did not answer (its address may be stale). */
    onUnreachable?: () => void;
  },
): void {
  reply.hijack();
  const hops = (forwardedOf(req.raw)?.hops ?? 0) + 1;
  const res = reply.raw;
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  const { pool, base } = poolFor(target.cellUrl);
  const headers = passOn(req.raw.headers);
  headers["x-request-id"] = req.id;
  headers[SECRET_HEADER] = target.secret;
  headers[HOPS_HEADER] = String(hops);
  headers[CLIENT_IP_HEADER] = target.clientIp;
  // `stream` writes the answer's body straight into the reply (no intermediate stream).
  pool
    .stream(
      {
        path: `${base}${req.raw.url ?? "/"}`,
        method: (req.raw.method ?? "GET") as Dispatcher.HttpMethod,
        headers,
        body: hasBody(req.raw.headers) ? req.raw : null,
        signal: abort.signal,
      },
      ({ statusCode, headers: answered }) => {
        res.writeHead(statusCode, passOn(answered as IncomingHttpHeaders));
        return res;
      },
    )
    .then(
      () => {},
      (err: unknown) => {
        if (abort.signal.aborted) return;
        req.log.warn({ err, cell: target.cellUrl }, "forward failed");
        target.onUnreachable?.();
        if (res.headersSent) {
          res.destroy();
          return;
        }
        writeError(
          res,
          new ServiceError(
            "internal_error",
            "internal error; safe to retry (the cell serving this workspace did not answer)",
          ),
          req.id,
        );
      },
    );
}
