import { KV_OPERATIONS } from "../primitives/kv/index.js";
import { STORAGE_OPERATIONS } from "../primitives/storage/index.js";
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
  ...KV_OPERATIONS,
  ...STORAGE_OPERATIONS,
];
