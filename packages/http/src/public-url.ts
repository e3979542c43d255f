import type { FastifyRequest } from "fastify";
import { forwardedOf } from "./forwarding.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The configured public base URL, if any (ServerOptions.publicUrl). */
    publicUrl: string | undefined;
    /** The trusted proxy's client-address header, if any (ServerOptions.clientIpHeader). */
    clientIpHeader: string | undefined;
  }
}

/** The origin a caller should use: the configured public URL, else the one it reached. */
export function publicOrigin(req: FastifyRequest): string {
  return req.server.publicUrl ?? `${req.protocol}://${req.headers.host}`;
}

/**
 * The caller's address: behind a proxy configured as trusted (`clientIpHeader`, such as
 * `x-forwarded-for` or `cf-connecting-ip`), the last entry of that header — the one the proxy in
 * front of us wrote, where earlier entries are whatever the client sent; else the socket's.
 */
export function clientIpOf(req: FastifyRequest): string {
  // Forwarded by another cell: the address that cell saw (the hop itself is vouched for).
  const forwarded = forwardedOf(req.raw);
  if (forwarded !== undefined) return forwarded.clientIp;
  const name = req.server.clientIpHeader;
  if (name !== undefined) {
    const value = req.headers[name];
    const last = (Array.isArray(value) ? value.at(-1) : value)?.split(",").at(-1)?.trim();
    if (last) return last;
  }
  return req.ip;
}
