import type { IncomingHttpHeaders } from "node:http";
import { FORWARD_HEADERS, FORWARD_PREFIX, forwardedOf, writeRawError } from "@prim/http";
import { ServiceError } from "@prim/wire";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type Dispatcher, Pool } from "undici";

/*
 * Forwarding between cells (CLOUD.md, "Scale-out"), the sending side: a process that receives
 * a request for a workspace another cell serves hands the HTTP request, as it came, to that
 * cell's internal listener under `/internal/forward/…` (@prim/http `acceptForward` receives
 * it); the bodies stream both ways (an upload is never held whole), and the answer — status,
 * headers, `X-Request-Id` — is the owner's.
 */

/** Headers of one connection, never passed on (RFC 9110 §7.6.1), and the hop's own. */
const HOP_BY_HOP = new Set<string>([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  FORWARD_HEADERS.secret,
  FORWARD_HEADERS.hops,
  FORWARD_HEADERS.clientIp,
]);

/** The answer's header naming the cell that forwarded it in Node (absent: none did). */
export const VIA_HEADER = "x-prim-via";

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
 * Takes the reply over and streams the request to `cellUrl`'s internal listener, and its
 * answer back (an undici pool per cell). A cell that does not answer is 500 `internal_error`
 * (safe to retry: nothing reached it), in the spec's error shape with this request's id.
 */
export function forwardRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  target: {
    cellUrl: string;
    secret: string;
    clientIp: string;
    /** This cell's id, named in the answer's `x-prim-via` (placement-router.ts). */
    via?: string;
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
  headers[FORWARD_HEADERS.secret] = target.secret;
  headers[FORWARD_HEADERS.hops] = String(hops);
  headers[FORWARD_HEADERS.clientIp] = target.clientIp;
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
        const headers = passOn(answered as IncomingHttpHeaders);
        if (target.via !== undefined) headers[VIA_HEADER] = target.via;
        res.writeHead(statusCode, headers);
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
        writeRawError(
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
