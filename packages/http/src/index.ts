export { createServer, createLocalServer, JSON_BODY_LIMIT, type ServerOptions } from "./server.js";
export { localAuthenticator, ROOT_PRINCIPAL, type LocalAuthOptions } from "./local-auth.js";
export { REST_ROUTES } from "./routes/index.js";
export { type RestRoute, mountRoute } from "./route.js";
export { buildOpenApi } from "./openapi.js";
export { VERSION } from "./version.js";
