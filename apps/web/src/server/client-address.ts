import type { WebEnv } from "./env";

/** Set by server.mjs from the request's socket (a client's copy never gets through). */
const SOCKET_HEADER = "x-prim-socket-address";
/** The one header the auth library reads the client's address from (auth.ts). */
export const CLIENT_ADDRESS_HEADER = "x-prim-client-address";

/** Whether this process runs under server.mjs (under plain `next start` the socket header could be anyone's). */
function socketHeaderTrusted(): boolean {
  return (globalThis as Record<symbol, unknown>)[Symbol.for("prim.web.socketAddressHeader")] === SOCKET_HEADER;
}

/**
 * The caller's address, by apps/api's rule (packages/http `clientIpOf`): behind a proxy named by
 * `PRIM_CLIENT_IP_HEADER`, the last entry of that header (the one the proxy wrote; earlier ones
 * are whatever the client sent); else the socket's. Undefined when neither is known: the auth
 * library then counts every such caller in one bucket.
 */
export function clientAddress(headers: Headers, env: Pick<WebEnv, "PRIM_CLIENT_IP_HEADER">): string | undefined {
  if (env.PRIM_CLIENT_IP_HEADER !== undefined) {
    const last = headers.get(env.PRIM_CLIENT_IP_HEADER)?.split(",").at(-1)?.trim();
    if (last) return last;
  }
  if (!socketHeaderTrusted()) return undefined;
  return headers.get(SOCKET_HEADER) || undefined;
}

/** The bytes of each request `withClientAddress` made, for readers that must not clone it. */
const bodies = new WeakMap<Request, ArrayBuffer>();

/**
 * The body `withClientAddress` read for `request`, or undefined for another request. Read it
 * here rather than through `request.clone()`: on Node 22.14 (undici #4150) a clone collected by
 * the garbage collector marks the original's body used, and the auth library's own clone of it
 * then throws "unusable" (a 500 on sign-in, seen in CI).
 */
export function forwardedBody(request: Request): ArrayBuffer | undefined {
  return bodies.get(request);
}

/**
 * The request as the auth library should see it: the client's address in CLIENT_ADDRESS_HEADER,
 * and only there. Its body is read here, once, and handed on as bytes (also to `forwardedBody`).
 */
export async function withClientAddress(
  request: Request,
  env: Pick<WebEnv, "PRIM_CLIENT_IP_HEADER">,
): Promise<Request> {
  const headers = new Headers(request.headers);
  headers.delete(CLIENT_ADDRESS_HEADER);
  const address = clientAddress(request.headers, env);
  if (address !== undefined) headers.set(CLIENT_ADDRESS_HEADER, address);
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  const forwarded = new Request(request.url, { method: request.method, headers, body, signal: request.signal });
  if (body !== undefined) bodies.set(forwarded, body);
  return forwarded;
}
