import { DB_OPERATIONS } from "../primitives/db/index.js";
import { FS_OPERATIONS } from "../primitives/fs/index.js";
import { KV_OPERATIONS } from "../primitives/kv/index.js";
import { MEMORY_OPERATIONS } from "../primitives/memory/index.js";
import { QUEUE_OPERATIONS } from "../primitives/queue/index.js";
import { STORAGE_OPERATIONS } from "../primitives/storage/index.js";
import { VAULT_OPERATIONS } from "../primitives/vault/index.js";
import { auditGroup, auditList, auditPrimitive } from "./audit.js";
import { primitiveExport } from "./export.js";
import { groupCreate, groupDelete, groupGet, groupList } from "./groups.js";
import {
  primitiveFork,
  primitivePause,
  primitiveResume,
  snapshotCreate,
  snapshotList,
  snapshotRestore,
} from "./lifecycle.js";
import { groupFind, primitiveResolve } from "./lookup.js";
import type { AnyOperation } from "./operation.js";
import {
  primitiveCreate,
  primitiveDelete,
  primitiveGet,
  primitiveList,
  primitiveStats,
  primitiveUpdate,
} from "./primitives.js";

/** The operations registry: every operation the engine serves, declared once. */
export const OPERATIONS: readonly AnyOperation[] = [
  groupCreate,
  groupList,
  groupGet,
  groupDelete,
  groupFind,
  primitiveResolve,
  primitiveCreate,
  primitiveList,
  primitiveGet,
  primitiveUpdate,
  primitiveDelete,
  primitiveStats,
  primitiveExport,
  snapshotCreate,
  snapshotList,
  snapshotRestore,
  primitiveFork,
  primitivePause,
  primitiveResume,
  auditList,
  auditGroup,
  auditPrimitive,
  ...KV_OPERATIONS,
  ...DB_OPERATIONS,
  ...STORAGE_OPERATIONS,
  ...FS_OPERATIONS,
  ...QUEUE_OPERATIONS,
  ...MEMORY_OPERATIONS,
  ...VAULT_OPERATIONS,
];
