import { isOperationName, TOOL_CATALOG } from "@prim/wire";
import { checkToolAccess } from "./annotations.js";
import { CHANGE_TOOLS } from "./changes.js";
import { DB_TOOLS } from "./db.js";
import { FS_TOOLS } from "./fs.js";
import { KV_TOOLS } from "./kv.js";
import { MEMORY_TOOLS } from "./memory.js";
import { PRIMITIVE_TOOLS } from "./primitives.js";
import { QUEUE_TOOLS } from "./queue.js";
import type { ToolSpec } from "./spec.js";
import { STORAGE_TOOLS } from "./storage.js";
import { VAULT_TOOLS } from "./vault.js";

/** Every MCP tool: one per entry of @prim/wire's `TOOL_CATALOG`, in its order (checked on load). */
export const TOOLS: readonly ToolSpec[] = checkTools([
  ...PRIMITIVE_TOOLS,
  ...CHANGE_TOOLS,
  ...DB_TOOLS,
  ...FS_TOOLS,
  ...QUEUE_TOOLS,
  ...MEMORY_TOOLS,
  ...VAULT_TOOLS,
  ...KV_TOOLS,
  ...STORAGE_TOOLS,
]);

/**
 * Checks every tool's actions against the wire contract's operation names, as REST routes are
 * checked against the engine's registry: a tool naming an operation that does not exist fails
 * the server's start, not an agent's call. (`ToolAction.op` is typed, so TypeScript catches it
 * first; this catches a tool list built at run time.) The tools must be @prim/wire's catalog,
 * each once and in its order (what the dashboard's consent screen lists), each declared read or
 * write as its operations are (`checkToolAccess`). Returns the tools.
 */
export function checkTools(tools: readonly ToolSpec[]): readonly ToolSpec[] {
  for (const tool of tools) {
    for (const [action, spec] of Object.entries(tool.actions)) {
      if (!isOperationName(spec.op)) throw new Error(`MCP tool ${tool.name} (${action}): unknown operation ${spec.op}`);
    }
  }
  const served = tools.map((tool) => tool.name).join(",");
  const declared = TOOL_CATALOG.map((tool) => tool.name).join(",");
  if (served !== declared) throw new Error(`MCP tools ${served} differ from @prim/wire's TOOL_CATALOG ${declared}`);
  return checkToolAccess(tools);
}

export type { ToolAction, ToolSpec } from "./spec.js";
