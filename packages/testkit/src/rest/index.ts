// @prim/testkit/rest: the REST suites' servers (a tenant of the file's shared local host, or the
// cloud target apps/api's setup registers) and the check of every answer against the OpenAPI
// document. Uses vitest's hooks: import it from tests only.
export { assertConformant, checkResponses } from "./conformance.js";
export {
  type HostOptions,
  type LocalHost,
  openHost,
  PerFile,
  sharedHost,
  startedHost,
  type Tenant,
  type TenantSpec,
} from "./local-host.js";
export {
  type ApiResponse,
  onCloudTarget,
  requestJson,
  type ServerTarget,
  startServer,
  type TestServer,
  type TestServerOptions,
  useServerTarget,
  withKv,
} from "./server.js";
