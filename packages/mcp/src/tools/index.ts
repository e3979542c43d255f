import { DB_TOOLS } from "./db.js";
import { FS_TOOLS } from "./fs.js";
import { KV_TOOLS } from "./kv.js";
import { MEMORY_TOOLS } from "./memory.js";
import { PRIMITIVE_TOOLS } from "./primitives.js";
import { QUEUE_TOOLS } from "./queue.js";
import type { ToolSpec } from "./spec.js";
import { STORAGE_TOOLS } from "./storage.js";
import { VAULT_TOOLS } from "./vault.js";

/** Every MCP tool: the primitive tools and one per allowlist name of the spec. */
export const TOOLS: readonly ToolSpec[] = [
  ...PRIMITIVE_TOOLS,
  ...DB_TOOLS,
  ...FS_TOOLS,
  ...QUEUE_TOOLS,
  ...MEMORY_TOOLS,
  ...VAULT_TOOLS,
  ...KV_TOOLS,
  ...STORAGE_TOOLS,
];

export type { ToolAction, ToolSpec } from "./spec.js";
