import type { OperationName } from "@prim/wire";
import type { ToolSpec } from "./spec.js";

/** What an operation declares of its access (@prim/engine's `Operation.access`). */
export interface DeclaredAccess {
  name: string;
  access: "read" | "write" | ((input: unknown) => "read" | "write");
}

/**
 * A tool's access as its operations declare it: "write" when any of its actions runs an operation
 * that may write (one decided by its input may), else "read".
 */
export function derivedAccess(tool: ToolSpec, operations: readonly DeclaredAccess[]): "read" | "write" {
  const byName = new Map(operations.map((op) => [op.name, op]));
  const ops = Object.values(tool.actions).map((action) => action.op);
  const writes = ops.some((name: OperationName) => {
    const op = byName.get(name);
    if (op === undefined) throw new Error(`MCP tool ${tool.name}: no operation ${name} among those given`);
    return op.access !== "read";
  });
  return writes ? "write" : "read";
}

/**
 * Checks each tool's declared access (@prim/wire's `TOOL_CATALOG`, what the consent screen shows
 * and its read-only preset grants) against what its operations declare (the engine's registry):
 * a tool declared "read" that runs a writing operation, or "write" running only reads, throws,
 * naming each. Returns the tools.
 */
export function checkToolAccess(
  tools: readonly ToolSpec[],
  operations: readonly DeclaredAccess[],
): readonly ToolSpec[] {
  const wrong = tools
    .map((tool) => ({ tool, derived: derivedAccess(tool, operations) }))
    .filter(({ tool, derived }) => tool.access !== derived)
    .map(
      ({ tool, derived }) =>
        `${tool.name} is declared ${tool.access} but its operations ${derived === "write" ? "write" : "only read"}`,
    );
  if (wrong.length > 0) throw new Error(`MCP tool access differs from the operations': ${wrong.join("; ")}`);
  return tools;
}
