import { groupExport, groupImport, groupImportStatus } from "./ops/archive.js";
import { auditGroup, auditList, auditPrimitive } from "./ops/audit.js";
import { changesGroup, changesRead } from "./ops/changes.js";
import { primitiveExport } from "./ops/export.js";
import { groupCreate, groupDelete, groupGet, groupList } from "./ops/groups.js";
import {
  primitiveFork,
  primitivePause,
  primitiveResume,
  snapshotCreate,
  snapshotList,
  snapshotRestore,
} from "./ops/lifecycle.js";
import { groupFind, primitiveResolve } from "./ops/lookup.js";
import {
  primitiveCreate,
  primitiveDelete,
  primitiveGet,
  primitiveList,
  primitiveStats,
  primitiveUpdate,
} from "./ops/primitives.js";
import { whoAmI } from "./ops/whoami.js";
import { DB_OPERATIONS, dbDefinition } from "./primitives/db/index.js";
import type { PrimitiveDefinition } from "./primitives/definition.js";
import { FS_OPERATIONS, fsDefinition } from "./primitives/fs/index.js";
import { KV_OPERATIONS, kvDefinition } from "./primitives/kv/index.js";
import { MEMORY_OPERATIONS, memoryDefinition } from "./primitives/memory/index.js";
import type { AnyOperation } from "./primitives/operation.js";
import { QUEUE_OPERATIONS, queueDefinition } from "./primitives/queue/index.js";
import { STORAGE_OPERATIONS, storageDefinition } from "./primitives/storage/index.js";
import { VAULT_OPERATIONS, vaultDefinition } from "./primitives/vault/index.js";

/**
 * What this engine serves: every primitive type (its definition) and every operation, each
 * declared once in its own folder and listed here. Nothing below this file imports it.
 */

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
  groupExport,
  groupImport,
  groupImportStatus,
  whoAmI,
  auditList,
  auditGroup,
  auditPrimitive,
  changesRead,
  changesGroup,
  ...KV_OPERATIONS,
  ...DB_OPERATIONS,
  ...STORAGE_OPERATIONS,
  ...FS_OPERATIONS,
  ...QUEUE_OPERATIONS,
  ...MEMORY_OPERATIONS,
  ...VAULT_OPERATIONS,
];
/** Every primitive type this engine serves, one entry per type. */
export const PRIMITIVE_DEFINITIONS: readonly PrimitiveDefinition[] = [
  kvDefinition,
  dbDefinition,
  storageDefinition,
  fsDefinition,
  queueDefinition,
  memoryDefinition,
  vaultDefinition,
];
