import type { OperationName, ToolInfo } from "@prim/wire";
import type { z } from "zod";
import type { ToolContext } from "../context.js";

/** One way a tool is used: the engine operation it runs and how its input is built. */
export interface ToolAction {
  op: OperationName;
  /** Tool arguments handed to the operation under the same name (when present). */
  fields?: readonly string[];
  /** Builds the rest of the operation's input from the arguments. */
  input?: (args: Record<string, any>, ctx: ToolContext) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Turns the operation's result into the tool's structured result. */
  output?: (result: any, ctx: ToolContext, args: Record<string, any>) => unknown;
  /**
   * The structured result's schema when it is not the operation's JSON answer
   * (`@prim/wire/schemas` `resultSchema`): an `output` reshaping it, an operation answering
   * bytes or nothing. Part of the tool's `outputSchema`.
   */
  result?: z.ZodType;
}

/**
 * An MCP tool: its catalog entry (@prim/wire's `TOOL_CATALOG`: the allowlist name it needs, its
 * title, description and type), its input schema telling a model how to use it, and each action
 * mapped onto one engine operation (so every call goes through `Invoker.invoke`, narrowed to
 * this tool).
 */
export interface ToolSpec extends ToolInfo {
  shape: z.ZodRawShape;
  /** Keyed by the `action` argument; the first entry is the default. */
  actions: Readonly<Record<string, ToolAction>>;
  /** `primitive` may be left out: the call then targets the session's group (changes_read). */
  groupWide?: boolean;
  /** Picks the action from the arguments when the tool has no `action` argument. */
  pick?: (args: Record<string, any>) => string;
  /**
   * Further allowlist tools a call with these arguments uses (db_exec's `enqueue` sends into a
   * queue: `queue_send`): the call is narrowed to them as well as to this tool, so the engine
   * still checks each against the credential's own allowlist and the session's `tools=`.
   */
  alsoNeeds?: (args: Record<string, any>) => readonly string[];
  /**
   * The call may talk to the client while it runs (progress, URL-mode elicitation): its POST is
   * answered with an SSE stream. Every other call is answered with plain JSON (json-calls.ts).
   */
  streams?: boolean;
}
