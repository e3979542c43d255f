import type { Socket } from "node:net";
import { type ErrorBody, invalid, prefixedId, type ServiceError, toServiceError } from "@prim/engine";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";

/**
 * Errors raised before a request reaches a route: by the router (a URL that is not valid
 * percent-encoded UTF-8, a path segment over `maxParamLength`) and by Node's HTTP parser (headers
 * over 16 KiB, which includes a long URL; bad framing; a request not received in time). Fastify
 * answers these in its own shape, without `X-Request-Id`, echoing the path. Here they take the
 * spec's shape like every other answer, never quote the request, and keep to the spec's status
 * table: every one is the caller's fault and none has a code of its own, so all are 400
 * `invalid_request` (Node's 414/431/408 statuses are not in the table).
 */

/** Longest path segment a route parameter may take (ids and names are far shorter). */
export const MAX_PARAM_LENGTH = 2048;

function routerError(err: FastifyError): ServiceError {
  switch (err.code) {
    case "FST_ERR_BAD_URL":
      return invalid("the URL path is not valid percent-encoded UTF-8");
    case "FST_ERR_MAX_PARAM_LENGTH":
      return invalid(`a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
    default:
      return toServiceError(err);
  }
}

function sendError(reply: FastifyReply, error: ServiceError): void {
  // The reply has no route context here (no serializer, no hooks): send JSON text ourselves.
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply
    .code(error.status)
    .type("application/json; charset=utf-8")
    .send(JSON.stringify(error.toJSON() satisfies ErrorBody));
}

/**
 * Fastify's `frameworkErrors` option. The caller's credentials and Host are checked first, as
 * for any request, so a refused caller learns nothing about how its URL was routed.
 */
export function frameworkErrorHandler(authenticate: (req: FastifyRequest) => unknown) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    reply.header("x-request-id", req.id);
    new Promise((resolve) => resolve(authenticate(req))).then(
      () => sendError(reply, routerError(err)),
      (refused: unknown) => sendError(reply, toServiceError(refused)),
    );
  };
}

const CLIENT_ERRORS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: "request line and headers are larger than 16 KiB (a URL counts toward this)",
  ERR_HTTP_REQUEST_TIMEOUT: "the request was not received in time",
  HPE_INVALID_METHOD: "malformed HTTP request: unknown method",
  HPE_INVALID_URL: "malformed HTTP request: invalid request target",
};

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes, so there is no request
 * and no reply, only the socket. Write the spec's error as a raw HTTP/1.1 response (with a fresh
 * request id; the caller's cannot be trusted from a request that did not parse) and close.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  // Never write over a response already under way on this connection (Node's own rule).
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const message = CLIENT_ERRORS[err.code ?? ""] ?? "malformed HTTP request";
    const body = JSON.stringify(invalid(message).toJSON());
    socket.write(
      "HTTP/1.1 400 Bad Request\r\n" +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${prefixedId("req")}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  }
  socket.destroy();
}
