import { dbDefinition } from "./db/index.js";
import type { PrimitiveDefinition } from "./definition.js";
import { fsDefinition } from "./fs/index.js";
import { kvDefinition } from "./kv/index.js";
import { memoryDefinition } from "./memory/index.js";
import { queueDefinition } from "./queue/index.js";
import { storageDefinition } from "./storage/index.js";
import { vaultDefinition } from "./vault/index.js";

/** Every primitive type this engine serves, one entry per type. */
export const PRIMITIVE_DEFINITIONS: readonly PrimitiveDefinition[] = [
  kvDefinition as PrimitiveDefinition,
  dbDefinition as PrimitiveDefinition,
  storageDefinition as PrimitiveDefinition,
  fsDefinition as PrimitiveDefinition,
  queueDefinition as PrimitiveDefinition,
  memoryDefinition as PrimitiveDefinition,
  vaultDefinition as PrimitiveDefinition,
];
