import { DB_OPERATIONS } from "../primitives/db/index.js";
import { FS_OPERATIONS } from "../primitives/fs/index.js";
import { KV_OPERATIONS } from "../primitives/kv/index.js";
import { QUEUE_OPERATIONS } from "../primitives/queue/index.js";
import { STORAGE_OPERATIONS } from "../primitives/storage/index.js";
import { primitiveExport } from "./export.js";
import { groupCreate, groupDelete, groupGet, groupList } from "./groups.js";
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
  primitiveCreate,
  primitiveList,
  primitiveGet,
  primitiveUpdate,
  primitiveDelete,
  primitiveStats,
  primitiveExport,
  ...KV_OPERATIONS,
  ...DB_OPERATIONS,
  ...STORAGE_OPERATIONS,
  ...FS_OPERATIONS,
  ...QUEUE_OPERATIONS,
];
