import {
  type Engine,
  type Invoker,
  invalid,
  jsonNestsDeeperThan,
  MAX_JSON_DEPTH,
  type Principal,
  prefixedId,
} from "@prim/engine";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { clientErrorHandler, frameworkErrorHandler, MAX_PARAM_LENGTH } from "./edge-errors.js";
import { installErrorHandling } from "./errors.js";
import { JSON_BODY_LIMIT } from "./limits.js";
import { type LocalAuthOptions, localAuthenticator, requestPath } from "./local-auth.js";
import { buildOpenApi } from "./openapi.js";
import { publicOrigin } from "./public-url.js";
import { mountRoute, type OperationLookup } from "./route.js";
import { REST_ROUTES } from "./routes/index.js";
import { mountSecretRequestPage } from "./secret-request-page.js";
import { VERSION } from "./version.js";

export { JSON_BODY_LIMIT };

export interface ServerOptions {
  /** The door to data: an engine, or the cloud's router to each workspace's engine. */
  invoker: Invoker;
  /** An operation's declaration by name: routes are checked against it, its schemas make the OpenAPI document. */
  operation: OperationLookup;
  /** Resolves the caller; throws ServiceError to refuse. */
  authenticate: (req: FastifyRequest) => Principal | Promise<Principal>;
  logger?: boolean;
  /**
   * The API's public base URL (`https://api.example.com`): the OpenAPI document's server and
   * the origin of presigned URLs. Without it, both use the origin the request came to.
   */
  publicUrl?: string;
  /**
   * A header the proxy in front of the API sets to the client's address (`x-forwarded-for`);
   * set it only behind such a proxy. Without it, the socket's address is the client's.
   */
  clientIpHeader?: string;
  /**
   * Runs after authentication and may take the request over: the cloud forwards a request for
   * a workspace another cell serves (`forwardRequest`, which hijacks the reply).
   */
  divert?: (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id: the caller's own `X-Request-Id` when it is sane (traces join up), else a new one. */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID_RE.test(given) ? given : prefixedId("req");
}

/**
 * What every Prim HTTP app shares, without routes: JSON parsing with the depth limit, the
 * spec's error shape (router and parser errors too), request ids, the `authenticate` hook on
 * every request, `/health`, and the public URL / client address settings. apps/mcp is this
 * plus `/mcp`; `createServer` adds the REST routes.
 */
export function createBaseServer(
  options: Pick<ServerOptions, "authenticate" | "divert" | "logger" | "publicUrl" | "clientIpHeader">,
): FastifyInstance {
  const { authenticate } = options;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: JSON_BODY_LIMIT,
    requestIdHeader: false,
    genReqId: requestIdOf,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH },
    // Router and HTTP-parser errors answer in the spec's shape too (`edge-errors.ts`).
    frameworkErrors: frameworkErrorHandler(authenticate),
    clientErrorHandler,
    // Shutdown must not wait for idle keep-alive connections.
    forceCloseConnections: true,
  });
  // JSON only (raw-body routes add their own parsers). An empty JSON body is no body (POST
  // routes without input); anything else must parse. This parser serves REST and `/mcp/<group>`
  // alike, so the depth limit below covers every JSON body the server accepts.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(null, undefined);
    // V8 parses any depth, but serialising a value nested ~5,000 deep overflows the stack.
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(invalid(`body: JSON nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      // V8's message can quote part of the body (a secret's value): keep only where it broke.
      const at = /at position \d+/.exec((err as Error).message)?.[0];
      const message = `body: invalid JSON${at === undefined ? "" : ` (${at})`}`;
      const error = new Error(message) as Error & { statusCode: number };
      error.statusCode = 400;
      done(error, undefined);
    }
  });

  installErrorHandling(app);

  // Callback style, not async: this hook runs on every request.
  // After authentication, `divert` may take the request over (a hijacked reply ends the lifecycle).
  const { divert } = options;
  const diverted = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (divert === undefined) return done();
    divert(req, reply).then(() => done(), done);
  };
  app.addHook("onRequest", (req, reply, done) => {
    reply.header("x-request-id", req.id);
    if (requestPath(req.url).startsWith("/v1/signed/")) setSignedCors(reply);
    try {
      const principal = authenticate(req);
      if (principal instanceof Promise) {
        principal.then((p) => {
          req.principal = p;
          diverted(req, reply, done);
        }, done);
        return;
      }
      req.principal = principal;
      diverted(req, reply, done);
    } catch (err) {
      done(err as Error);
    }
  });

  app.get("/health", async () => ({ ok: true, version: VERSION }));
  app.decorate("publicUrl", options.publicUrl?.replace(/\/+$/, ""));
  app.decorate("clientIpHeader", options.clientIpHeader?.toLowerCase());
  return app;
}

/** The REST API over an engine: routes, error shape, request ids, OpenAPI, health. */
export function createServer(options: ServerOptions): FastifyInstance {
  const door = { invoker: options.invoker, operation: options.operation };
  const app = createBaseServer(options);
  // Browsers on any origin may use a signed URL; PUT with a Content-Type needs a preflight.
  app.options("/v1/signed/*", (_req, reply) => reply.code(204).send());

  for (const route of REST_ROUTES) if (!route.rawBody) mountRoute(app, door, route);
  // Raw-body routes live in their own context, whose only parser hands the stream on unread.
  app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser("*", (_req, _payload, done) => done(null, undefined));
    for (const route of REST_ROUTES) if (route.rawBody) mountRoute(raw, door, route);
  });

  const { publicUrl } = app;
  const openapi = buildOpenApi(options.operation, REST_ROUTES, VERSION, publicUrl ?? "http://localhost:7777");
  app.get("/v1/openapi.json", async (req) =>
    publicUrl === undefined ? { ...openapi, servers: [{ url: publicOrigin(req) }] } : openapi,
  );

  return app;
}

/** Signed URLs are capabilities: any origin may use them (and read their errors). */
function setSignedCors(reply: FastifyReply): void {
  reply.header("Access-Control-Allow-Origin", "*");
  reply.header("Access-Control-Allow-Methods", "GET, HEAD, PUT");
  reply.header("Access-Control-Allow-Headers", "Content-Type, If-None-Match, Range");
  reply.header("Access-Control-Expose-Headers", "ETag, Content-Length, Content-Range, Accept-Ranges, Last-Modified");
  reply.header("Access-Control-Max-Age", "600");
}

/** The local engine's REST server: tokenless on localhost unless a root token is set. */
export function createLocalServer(options: {
  engine: Engine;
  rootToken?: string;
  logger?: boolean;
  publicUrl?: string;
}): FastifyInstance {
  const auth: LocalAuthOptions = { rootToken: options.rootToken };
  const { engine } = options;
  const app = createServer({
    ...engineDoor(engine),
    authenticate: localAuthenticator(auth),
    logger: options.logger,
    publicUrl: options.publicUrl,
  });
  mountSecretRequestPage(app, engine, { rootToken: options.rootToken });
  return app;
}

/** An engine as a server's door to data: it invokes, and it knows its operations. */
export function engineDoor(engine: Engine): Pick<ServerOptions, "invoker" | "operation"> {
  return { invoker: engine, operation: (name) => engine.operation(name) };
}
