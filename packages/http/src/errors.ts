import { type ErrorCode, ServiceError, toServiceError } from "@prim/engine";
import type { FastifyError, FastifyInstance } from "fastify";

/** Fastify's own request errors, translated into the spec's codes. */
function fromFastify(err: FastifyError): ServiceError | null {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ServiceError("payload_too_large", "request body is larger than this route accepts");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ServiceError("invalid_request", "Content-Type must be application/json");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ServiceError("invalid_request", "body: empty JSON body");
    default:
      break;
  }
  if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
    return new ServiceError("invalid_request", err.message);
  }
  return null;
}

/**
 * One error handler: every failure leaves as `{ error: { code, message } }` with the
 * table's status. Faults that are not ServiceErrors are logged and become 500 without detail.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const known = err instanceof ServiceError ? err : fromFastify(err);
    const serviceError = known ?? toServiceError(err);
    if (known === null) req.log.error({ err }, "internal error");
    for (const [name, value] of Object.entries(serviceError.headers)) reply.header(name, value);
    reply.code(serviceError.status).send(serviceError.toJSON());
  });
  app.setNotFoundHandler((req, reply) => {
    const code: ErrorCode = "not_found";
    // The path is not quoted back: it may carry a signed URL's token, and it may be long.
    reply.code(404).send({ error: { code, message: `no ${req.method} route at this path (see /v1/openapi.json)` } });
  });
}
