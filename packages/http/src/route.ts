import type { AnyOperation, Invoker, OperationName, Principal } from "@prim/engine";
import { invalid, rawJsonOf } from "@prim/engine";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { clientIpOf } from "./public-url.js";
import type { RouteResponses } from "./responses/index.js";
import { streamChanges, wantsEventStream } from "./sse.js";

export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * A REST route is a thin mapping onto one engine operation: where its input comes from, what
 * the target is, and the success status. The OpenAPI document is generated from the same
 * declaration and the operation's zod schema.
 */
export interface RestRoute {
  method: HttpMethod;
  /** Fastify path syntax: `/v1/primitives/:id/keys/*`. */
  url: string;
  /** Engine operation name. */
  op: OperationName;
  /** Path parameter naming the operation's target (`id` or `group`). */
  target?: string;
  /** Input fields taken from path parameters: `{ key: "*" }`. */
  pathInput?: Readonly<Record<string, string>>;
  /** Where the remaining input fields come from (`custom`: the `input` function builds it all). */
  from: "body" | "query" | "none" | "custom";
  /** Query parameters a `custom` route reads (documented from the operation's schema). */
  query?: readonly string[];
  /** Builds the input from the request (raw-body and header-driven routes). */
  input?: (req: FastifyRequest) => Record<string, unknown>;
  /** Writes the response itself (object bodies and their headers). */
  respond?: (reply: FastifyReply, result: unknown, req: FastifyRequest) => FastifyReply;
  /** The request body is a raw byte stream handed to the operation unread. */
  rawBody?: boolean;
  /** The operation gets an AbortSignal that fires if the client goes away (long polls). */
  abortable?: boolean;
  /** With `Accept: text/event-stream`, the answer is a stream of the feed's entries (sse.ts). */
  sse?: boolean;
  /** Success status; 204 sends no body. */
  status?: 200 | 201 | 204;
  /** What the route answers, where it is not the operation's JSON result under `status`. */
  responses?: RouteResponses;
  summary: string;
  /** Longer OpenAPI text, where a route's answer has rules of its own (limits, truncation). */
  description?: string;
  tag: string;
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds the operation's input from the request as the route declares. */
export function routeInput(route: RestRoute, req: FastifyRequest): Record<string, unknown> {
  let input: Record<string, unknown> = route.input === undefined ? {} : route.input(req);
  if (route.from === "body") {
    if (req.body !== undefined && req.body !== null && !isPlainObject(req.body)) {
      throw invalid("body: expected a JSON object");
    }
    input = { ...((req.body as Record<string, unknown> | undefined) ?? {}) };
  } else if (route.from === "query") {
    input = { ...(req.query as Record<string, unknown>) };
  }
  const params = req.params as Record<string, string>;
  for (const [field, param] of Object.entries(route.pathInput ?? {})) {
    input[field] = params[param];
  }
  return input;
}

/** Aborts when the response's connection closes before the response was sent. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Finds an operation's declaration by name (an engine's `operation`, or the registry's). */
export type OperationLookup = (name: string) => AnyOperation | undefined;

export function mountRoute(
  app: FastifyInstance,
  door: { invoker: Invoker; operation: OperationLookup },
  route: RestRoute,
): void {
  if (door.operation(route.op) === undefined) throw new Error(`route ${route.url}: unknown operation ${route.op}`);
  app.route({
    method: route.method,
    url: route.url,
    // GET routes that serve bodies declare their HEAD twin themselves.
    exposeHeadRoute: route.respond === undefined,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const params = req.params as Record<string, string>;
      const target = route.target === undefined ? null : (params[route.target] ?? null);
      if (route.sse && wantsEventStream(req)) {
        return streamChanges(door.invoker, route.op, target, routeInput(route, req), req, reply);
      }
      const result = await door.invoker.invoke(req.principal, route.op, target, routeInput(route, req), {
        requestId: req.id,
        clientIp: clientIpOf(req),
        onLimits: (headers) => void reply.headers(headers),
        ...(route.abortable ? { signal: clientGone(reply) } : {}),
      });
      if (route.respond !== undefined) return route.respond(reply, result, req);
      reply.code(route.status ?? 200);
      if (route.status === 204) return reply.send();
      // A result that carries its own JSON text (a cached kv entry) is sent as is.
      const raw = rawJsonOf(result);
      if (raw !== undefined) return reply.type("application/json; charset=utf-8").send(raw);
      return reply.send(result);
    },
  });
}
