import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { bearerToken, type Invoker, PRIMITIVE_TYPES, ServiceError, TOKEN68_RE } from "@prim/wire";
import { decodeWire, encodeWire, errorToWire, WIRE_STREAM_BYTES, type WireRequest } from "@prim/wire/invoke";
import Fastify, { type FastifyInstance } from "fastify";
import { z } from "zod";
import { acceptForward, FORWARD_PREFIX } from "./forwarding.js";
import { requestIdOf } from "./server.js";
import { secretMatcher } from "./shared-secret.js";

/**
 * `POST /internal/invoke`: the engine's `invoke` over HTTP, for a transport in another process
 * (the cloud's MCP app, the dashboard) through `RemoteInvoker` (`@prim/wire/invoke`). It is a separate
 * listener, never the public port: the caller is trusted to name any principal, so the only
 * credential is the cell's shared secret (`PRIM_INTERNAL_SECRET`), and it binds to loopback
 * unless told otherwise. Wire format: packages/wire `src/invoke/codec.ts`.
 */
export interface InternalInvokeOptions {
  invoker: Invoker;
  /** The shared secret callers send as `Authorization: Bearer <secret>`; at least 32 characters. */
  secret: string;
  logger?: boolean;
  /**
   * Serves requests forwarded by another cell (`/internal/forward/…`, checked by the
   * `x-prim-cell-secret` header: forwarding.ts): the public app's router.
   */
  forward?: (req: IncomingMessage, res: ServerResponse) => void;
}

/** A request body: 1 MiB inline content is ~1.4 MB base64; db batches carry more. */
const INTERNAL_BODY_LIMIT = 32 * 1024 * 1024;

/**
 * A principal as the internal listener's callers name it (they are trusted to name any): loose,
 * so fields a Principal gains (the workspace id) cross without an edit here. Also the schema of
 * other internal routes that act for a caller (apps/api's `POST /internal/webhooks`).
 */
export const internalPrincipal = z.looseObject({
  kind: z.enum(["account", "local", "scoped", "oauth"]),
  workspace: z.string().min(1),
  actor: z.string().min(1),
  groupId: z.string().nullable(),
  tools: z.array(z.string()).nullable(),
  narrowed: z.array(z.array(z.string())).optional(),
  readOnly: z.boolean().optional(),
});

const requestSchema = z.object({
  principal: internalPrincipal,
  op: z.string().min(1),
  target: z.union([
    z.string(),
    z.strictObject({ group: z.string(), ref: z.string(), type: z.enum(PRIMITIVE_TYPES).optional() }),
    z.null(),
  ]),
  input: z.unknown(),
  meta: z
    .object({
      requestId: z.string().optional(),
      audit: z.boolean().optional(),
      hops: z.number().int().min(0).optional(),
    })
    .default({}),
});

/** The internal listener's Fastify app (not yet listening: see `listenInternal`). */
export function createInternalServer(options: InternalInvokeOptions): FastifyInstance {
  if (options.secret.length < 32) throw new Error("the internal invoke secret must be at least 32 characters");
  if (!TOKEN68_RE.test(options.secret)) {
    throw new Error("the internal invoke secret must be a token68 (letters, digits, -._~+/ and trailing =)");
  }
  const matches = secretMatcher(options.secret);
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: INTERNAL_BODY_LIMIT,
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Forwarded requests bypass this app: they go, unread, to the public app's router.
    serverFactory: (handler) => {
      const forward = options.forward === undefined ? undefined : acceptForward(options.secret, options.forward);
      return createHttpServer((req, res) => {
        if (forward !== undefined && req.url?.startsWith(`${FORWARD_PREFIX}/`)) forward(req, res);
        else handler(req, res);
      });
    },
  });

  app.addHook("onRequest", async (req, reply) => {
    reply.header("x-request-id", req.id);
    if (!matches(bearerToken(req.headers.authorization))) {
      throw new ServiceError("invalid_token", "the internal invoke endpoint needs the cell's shared secret");
    }
  });

  app.setErrorHandler((err, req, reply) => {
    // Fastify's own request errors (bad JSON, body too large) keep their 4xx as invalid_request.
    const statusCode = (err as { statusCode?: number }).statusCode;
    const fault =
      err instanceof ServiceError
        ? err
        : statusCode === 413
          ? new ServiceError("payload_too_large", "the internal invoke body is over its limit")
          : statusCode !== undefined && statusCode >= 400 && statusCode < 500
            ? new ServiceError("invalid_request", "the internal invoke body is not valid JSON")
            : err;
    if (!(fault instanceof ServiceError)) req.log.error({ err }, "internal invoke failed");
    const { status, body } = errorToWire(fault);
    void reply.code(status).header("x-request-id", req.id).send(body);
  });

  app.post("/internal/invoke", async (req, reply) => {
    const parsed = requestSchema.safeParse(req.body);
    if (!parsed.success) {
      throw new ServiceError("invalid_request", `internal invoke: ${parsed.error.issues[0]?.message ?? "bad request"}`);
    }
    const call = parsed.data as WireRequest;
    // The caller going away (an MCP client hanging up on a long poll) ends the call early.
    const abort = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const result = await options.invoker.invoke(call.principal, call.op, call.target, decodeWire(call.input), {
      requestId: call.meta.requestId ?? req.id,
      audit: call.meta.audit,
      hops: call.meta.hops,
      signal: abort.signal,
    });
    return { result: await encodeWire(result, WIRE_STREAM_BYTES) };
  });
  return app;
}

/**
 * Starts the internal listener: loopback (`127.0.0.1`) unless `host` says otherwise, since
 * anything that can reach it with the secret acts as any principal. Answers its URL.
 */
export async function listenInternal(
  app: FastifyInstance,
  options: { port?: number; host?: string } = {},
): Promise<string> {
  const host = options.host ?? "127.0.0.1";
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
