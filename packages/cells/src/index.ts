export { S3BlobStore } from "./blobs/s3-blob-store.js";
export { createS3Client } from "./blobs/s3-client.js";
export { type CellEnv, cellEnv, cellEnvProblems, readCellEnv } from "./cell-env.js";
export { CellService } from "./cell-service.js";
export { archiveStore, blobStores, localBlobDir, masterKeyOf, openCell } from "./cell-storage.js";
export { forwardRequest } from "./forwarding.js";
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
  FREEZE_GRACE_MS,
  FREEZE_WAIT_MS,
  PlacementRouter,
  type PlacementRouterOptions,
  type Route,
} from "./placement-router.js";
export { PgSecretExportPolicy } from "./secret-export-policy.js";
export { copyWorkspace, packWorkspace, unpackWorkspace, type WorkspaceFiles } from "./workspace-archive.js";
export { MOVING_RETRY_AFTER_S, WorkspaceEngines, workspaceMoving } from "./workspace-engines.js";
