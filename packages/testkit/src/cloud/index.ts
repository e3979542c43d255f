// @prim/testkit/cloud: the cloud as production runs it (cells over Postgres, s3rver and Redis),
// the OAuth stack over it, and a request for every REST route. It imports the apps: a test-only
// layer above them (README).

// The harnesses of apps/web start processes on ports they must know first.
export { freePort } from "../ports.js";
export {
  FAST_ENTERPRISE,
  fastWorkspace,
  startCells,
  type TestCellNode,
  type TestCellOptions,
  type TestCells,
} from "./cells.js";
export { call, startCloud, type TestCloud, twoGroupWorkspace } from "./cloud.js";
export {
  authorizeUrl,
  Browser,
  consent,
  consentedToken,
  consentForm,
  exchangeCode,
  MemoryProvider,
  type OAuthStack,
  pkce,
  REDIRECT,
  registerClient,
  startOAuthStack,
  TOOL_NAMES,
  tokenRequest,
} from "./oauth.js";
export { makerFor, prepared, readState, succeeded, verdict } from "./route-prepare.js";
export {
  type Answer,
  MARK,
  type RouteRequest,
  requestFor,
  type Seeded,
  seed,
  send,
  TARGETED_ROUTES,
  typeOf,
  UNTARGETED_ROUTES,
} from "./route-samples.js";
export { startS3, TEST_BUCKET } from "./s3.js";
