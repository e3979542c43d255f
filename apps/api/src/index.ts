export { type ApiApp, type ApiAppOptions, createApiApp } from "./app.js";
export { CellService } from "./cells/cell-service.js";
export {
  MOVE_STEPS,
  type MoveOptions,
  type MoveReport,
  type MoveStep,
  moveWorkspace,
  type RebuildReport,
  rebuildCell,
} from "./cells/operator.js";
export { PlacedInvoker } from "./cells/placed-invoker.js";
export { type ApiEnv, readApiEnv } from "./env.js";
export { fsckWorkspace } from "./fsck.js";
export { limitKeys, RedisLimiter, type RedisLimiterOptions } from "./limits/limiter.js";
export { Metering } from "./limits/metering.js";
export { main, startApi } from "./start.js";
export { WorkspaceEngines } from "./tenants.js";
