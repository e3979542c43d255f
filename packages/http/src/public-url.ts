import type { FastifyRequest } from "fastify";

declare module "fastify" {
  interface FastifyInstance {
    /** The configured public base URL, if any (ServerOptions.publicUrl). */
    publicUrl: string | undefined;
  }
}

/** The origin a caller should use: the configured public URL, else the one it reached. */
export function publicOrigin(req: FastifyRequest): string {
  return req.server.publicUrl ?? `${req.protocol}://${req.headers.host}`;
}
