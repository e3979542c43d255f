export { S3BlobStore } from "./blobs/s3-blob-store.js";
export { createS3Client } from "./blobs/s3-client.js";
export { type CellEnv, cellEnv, cellEnvProblems, readCellEnv } from "./cell-env.js";
export { CellService } from "./cell-service.js";
export { archiveStore, blobStores, localBlobDir, masterKeyOf, openCell } from "./cell-storage.js";
export { type Edge, type EdgeOptions, HAPROXY_BIN, startEdge } from "./edge/edge-process.js";
export {
  backendName,
  type EdgeCell,
  type EdgeConfigOptions,
  FALLBACK_BACKEND,
  haproxyConfig,
  mapFileText,
} from "./edge/haproxy-config.js";
export { HaproxyRuntime } from "./edge/haproxy-runtime.js";
export { EdgeMapWatcher, type EdgeMapWatcherOptions } from "./edge/map-watcher.js";
export { forwardRequest, VIA_HEADER } from "./forwarding.js";
export { fsckWorkspace } from "./fsck.js";
export {
  MOVE_STEPS,
  type MoveOptions,
  type MoveReport,
  type MoveStep,
  moveWorkspace,
  type OperatorEnv,
  type RebuildReport,
  rebuildCell,
} from "./operator.js";
export { PlacementCache, type PlacementCacheOptions } from "./placement-cache.js";
export {
  CELL_HEADER,
  FREEZE_GRACE_MS,
  FREEZE_WAIT_MS,
  PlacementRouter,
  type PlacementRouterOptions,
  type Route,
} from "./placement-router.js";
export { PgSecretExportPolicy } from "./secret-export-policy.js";
export { copyWorkspace, packWorkspace, unpackWorkspace, type WorkspaceFiles } from "./workspace-archive.js";
export { MOVING_RETRY_AFTER_S, WorkspaceEngines, workspaceMoving } from "./workspace-engines.js";
