import { ServiceError } from "@prim/wire";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

const ALLOW_HEADERS =
  "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, x-service-group, x-request-id";
const EXPOSE_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate, x-request-id";

/**
 * The `Origin` rule of MCP's Streamable HTTP transport (2025-11-25, "Security Warning": servers
 * MUST validate `Origin` and answer 403 to an invalid one). A request without `Origin` (every
 * non-browser client) passes; a browser's must be one of `allowed` (exact origins, or `*` for
 * any). Allowed browser origins get CORS answers on `/mcp` (preflight included); the
 * protected-resource metadata is public and readable from any origin.
 */
export class OriginPolicy {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(allowed: readonly string[]) {
    this.any = allowed.includes("*");
    this.origins = new Set(allowed.filter((o) => o !== "*").map((o) => new URL(o).origin));
  }

  allows(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    if (this.any) return true;
    try {
      return this.origins.has(new URL(origin).origin);
    } catch {
      return false; // "null" and other opaque origins
    }
  }

  /** Throws 403 `forbidden` for a browser origin not on the list. */
  check(req: FastifyRequest): void {
    const origin = req.headers.origin;
    if (!this.allows(origin)) {
      throw new ServiceError(
        "forbidden",
        `requests from origin '${origin}' are refused (allowed browser origins: PRIM_MCP_ALLOWED_ORIGINS)`,
      );
    }
  }

  /**
   * CORS headers on every answer to an allowed browser origin, and the `/mcp` preflight. The
   * MCP transport writes its answers to the raw response, so the headers go there once the
   * request is admitted; answers refused earlier (401) get them as they are sent.
   */
  install(app: FastifyInstance, path: string): void {
    const allowedOrigin = (req: FastifyRequest) => {
      const origin = req.headers.origin;
      return origin !== undefined && this.allows(origin) ? origin : undefined;
    };
    app.addHook("onRequest", (req, reply, done) => {
      const origin = allowedOrigin(req);
      if (origin !== undefined) corsHeaders(reply, origin);
      done();
    });
    app.addHook("onSend", async (req, reply, payload) => {
      const origin = allowedOrigin(req);
      if (origin !== undefined) corsHeaders(reply, origin);
      return payload;
    });
    app.options(path, (_req, reply) => {
      reply
        .header("Access-Control-Allow-Methods", "GET, POST, DELETE")
        .header("Access-Control-Allow-Headers", ALLOW_HEADERS)
        .header("Access-Control-Max-Age", "600")
        .code(204)
        .send();
    });
  }
}

function corsHeaders(reply: FastifyReply, origin: string): void {
  reply.raw.setHeader("Access-Control-Allow-Origin", origin);
  reply.raw.setHeader("Access-Control-Expose-Headers", EXPOSE_HEADERS);
  reply.raw.setHeader("Vary", "Origin");
}
