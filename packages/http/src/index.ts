export { localOpenApi, type OpenApiDocument, renderApiReference } from "./api-reference.js";
export { FORWARD_HEADERS, FORWARD_PREFIX, type Forwarded, forwardedOf, writeRawError } from "./forwarding.js";
export {
  createInternalServer,
  type InternalInvokeOptions,
  internalPrincipal,
  listenInternal,
} from "./internal-invoke.js";
export { type LocalAuthOptions, localAuthenticator, PAGE_VISITOR, ROOT_PRINCIPAL, requestPath } from "./local-auth.js";
export { buildOpenApi, openApiPath } from "./openapi.js";
export { clientIpOf } from "./public-url.js";
export { mountRoute, type OperationLookup, type RestRoute } from "./route.js";
export { REST_ROUTES } from "./routes/index.js";
export { escapeHtml, mountSecretRequestPage, SECRET_REQUEST_PAGE } from "./secret-request-page.js";
export {
  createBaseServer,
  createLocalServer,
  createServer,
  engineDoor,
  JSON_BODY_LIMIT,
  type ServerOptions,
} from "./server.js";
export { VERSION } from "./version.js";
