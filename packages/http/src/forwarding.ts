import type { IncomingMessage, ServerResponse } from "node:http";
import { ServiceError } from "@prim/wire";
import { errorToWire } from "@prim/wire/invoke";
import { secretMatcher } from "./shared-secret.js";

/*
 * Forwarding between cells (CLOUD.md, "Scale-out"), the receiving side: a process that gets a
 * request for a workspace another cell serves hands the HTTP request, as it came, to that
 * cell's internal listener under `/internal/forward/…` (the sending side is @prim/cells
 * `forwardRequest`); the owner authenticates the caller's credential again. The shared secret
 * only vouches for the hop and for the client address the first process saw. It lives here
 * because the internal listener and `clientIpOf` read it.
 */

export const FORWARD_PREFIX = "/internal/forward";
/** The hop's headers: the cells' secret, the hop count and the client's address. */
export const FORWARD_HEADERS = {
  secret: "x-prim-cell-secret",
  hops: "x-prim-hops",
  clientIp: "x-prim-client-ip",
} as const;
const SECRET_HEADER = FORWARD_HEADERS.secret;
const HOPS_HEADER = FORWARD_HEADERS.hops;
const CLIENT_IP_HEADER = FORWARD_HEADERS.clientIp;

export interface Forwarded {
  /** The address the first process saw. */
  clientIp: string;
  /** How many cells the request passed before this one. */
  hops: number;
}

const FORWARDED = Symbol("prim.forwarded");
type Marked = IncomingMessage & { [FORWARDED]?: Forwarded };

/** Answers `err` in the spec's error shape on a raw response (outside Fastify's error handling). */
export function writeRawError(res: ServerResponse, err: ServiceError, requestId?: string): void {
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
      writeRawError(res, new ServiceError("invalid_token", "a forward needs the cells' shared secret"));
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
