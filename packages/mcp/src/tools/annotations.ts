import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { OperationName } from "@prim/wire";
import { OPERATION_EFFECTS } from "./effects.js";
import type { ToolSpec } from "./spec.js";

/** What an operation declares of its effects (@prim/engine's `Operation`; `effects.ts`). */
export interface OperationEffects {
  access: "read" | "write";
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
}

const opsOf = (tool: ToolSpec): OperationName[] => Object.values(tool.actions).map((action) => action.op);

/** A tool's access from its operations: "write" when any of them may write, else "read". */
export function derivedAccess(
  tool: ToolSpec,
  effects: Readonly<Record<string, OperationEffects>> = OPERATION_EFFECTS,
): "read" | "write" {
  return opsOf(tool).some((op) => effectsOf(op, tool, effects).access === "write") ? "write" : "read";
}

/**
 * A tool's MCP annotations, derived from what its operations declare — never written per tool:
 * read-only when every operation reads; destructive when any may delete or overwrite; idempotent
 * when every writing one is; open-world when any reaches beyond Prim (a vault fetch). Every hint
 * is sent, since MCP's defaults (destructive, open-world) would say the opposite of most tools.
 */
export function toolAnnotations(
  tool: ToolSpec,
  effects: Readonly<Record<string, OperationEffects>> = OPERATION_EFFECTS,
): ToolAnnotations {
  const all = opsOf(tool).map((op) => effectsOf(op, tool, effects));
  const writes = all.filter((e) => e.access === "write");
  return {
    title: tool.title,
    readOnlyHint: writes.length === 0,
    destructiveHint: writes.some((e) => e.destructive === true),
    idempotentHint: writes.every((e) => e.idempotent === true),
    openWorldHint: all.some((e) => e.openWorld === true),
  };
}

function effectsOf(op: string, tool: ToolSpec, effects: Readonly<Record<string, OperationEffects>>): OperationEffects {
  const found = effects[op];
  if (found === undefined) throw new Error(`MCP tool ${tool.name}: no declared effects for operation ${op}`);
  if (found.access === "write" && (found.destructive === undefined || found.idempotent === undefined)) {
    throw new Error(`MCP tool ${tool.name}: operation ${op} writes but does not say whether it destroys or repeats`);
  }
  return found;
}

/**
 * Checks each tool's access in @prim/wire's catalog (what the consent screen badges and its
 * read-only preset grant) against what its operations declare, and that every tool's
 * annotations can be derived: a mismatch throws, naming each tool. Returns the tools.
 */
export function checkToolAccess(
  tools: readonly ToolSpec[],
  effects: Readonly<Record<string, OperationEffects>> = OPERATION_EFFECTS,
): readonly ToolSpec[] {
  const wrong = tools
    .map((tool) => ({ tool, derived: derivedAccess(tool, effects) }))
    .filter(({ tool, derived }) => tool.access !== derived)
    .map(
      ({ tool, derived }) =>
        `${tool.name} is declared ${tool.access} but its operations ${derived === "write" ? "write" : "only read"}`,
    );
  if (wrong.length > 0) throw new Error(`MCP tool access differs from the operations': ${wrong.join("; ")}`);
  for (const tool of tools) toolAnnotations(tool, effects);
  return tools;
}
