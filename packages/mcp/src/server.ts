import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type ChangeSource,
  type Invoker,
  type Manifest,
  narrowTools,
  type Principal,
  ServiceError,
  type Target,
  toolAllowed,
  toServiceError,
} from "@prim/wire";
import { z } from "zod";
import type { ToolContext } from "./context.js";
import { callChannel } from "./elicit.js";
import { fenceData } from "./fence.js";
import { withResourceLinks } from "./resource-links.js";
import { registerResources } from "./resources.js";
import { toolAnnotations } from "./tools/annotations.js";
import { TOOLS, type ToolSpec } from "./tools/index.js";
import { KEY_TOOLS, type KeyManager, type KeyToolSpec, keyToolAnnotations } from "./tools/keys.js";
import { outputSchemaOf, toolOutputSchema } from "./tools/output.js";
import { VERSION } from "./version.js";

export interface McpServerOptions {
  /** The door to data: the engine in process, or a `RemoteInvoker` to one elsewhere. */
  invoker: Invoker;
  /** The caller; `tools=` narrowing is already applied. */
  principal: Principal;
  /** The session's group (`openGroup`). */
  group: Manifest;
  /** The engine's base URL, for signed URLs. */
  baseUrl: string;
  /** Change notices for resource subscriptions (resources.ts); without it, no `subscribe`. */
  changes?: ChangeSource;
  /**
   * The page where a person answers a secret request (`vault_request_secret`): the cloud's
   * dashboard. Default: the local engine's own page, `<baseUrl>/secret-requests/<primitive>/<request>`.
   */
  secretRequestUrl?: (ids: { workspace: string; primitive: string; request: string }) => string;
  /**
   * Minted keys (the cloud's apps/mcp): with it, the key tools `key_mint`, `key_list`,
   * `key_revoke` are served to callers whose allowlist grants them; without it (the local
   * engine) they do not exist.
   */
  keys?: KeyManager;
}

/** `primitive_list` is always available to a caller that reaches the group (spec). */
const ALWAYS = new Set(["primitive_list"]);

/** The tools this caller may see: its allowlist (and `tools=`) decide. */
export function visibleTools(principal: Principal): ToolSpec[] {
  return TOOLS.filter((tool) => ALWAYS.has(tool.name) || toolAllowed(principal, tool.name));
}

/** The key tools this caller may see, when the host manages keys: its allowlist decides, as for any tool. */
export function visibleKeyTools(principal: Principal, keys: KeyManager | undefined): KeyToolSpec[] {
  return keys === undefined ? [] : KEY_TOOLS.filter((tool) => toolAllowed(principal, tool.name));
}

/**
 * A tool result in both forms: structured, and the same JSON as text. A success's text is fenced
 * as data (`fenceData`): it carries what users and agents stored, which is never an instruction.
 */
function result(value: unknown, isError = false): CallToolResult {
  // Plain JSON only: operation results may carry symbol keys (RAW_JSON, FS_CREATED) that the
  // SDK's result schema refuses, and the text rendering must say exactly what the object does.
  const plain: unknown = JSON.parse(JSON.stringify(value ?? null));
  const structured =
    typeof plain === "object" && plain !== null && !Array.isArray(plain)
      ? (plain as Record<string, unknown>)
      : { result: plain };
  const json = JSON.stringify(structured, null, 2);
  return {
    content: [{ type: "text", text: isError ? json : fenceData(json) }],
    structuredContent: structured,
    ...(isError ? { isError: true } : {}),
  };
}

function withoutUndefined(args: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) if (args[field] !== undefined) out[field] = args[field];
  return out;
}

/**
 * Runs one tool call through `invoker.invoke`, narrowed to the tool; errors become results. Every
 * call asks for an audit entry (`meta.audit`), reads included: an agent's reads leave a trail.
 */
async function callTool(
  tool: ToolSpec,
  args: Record<string, any>,
  options: McpServerOptions,
  channel: ReturnType<typeof callChannel>,
): Promise<CallToolResult> {
  const principal = ALWAYS.has(tool.name)
    ? options.principal
    : narrowTools(options.principal, [tool.name, ...(tool.alsoNeeds?.(args) ?? [])]);
  const pageOf =
    options.secretRequestUrl ??
    (({ primitive, request }) => `${options.baseUrl}/secret-requests/${primitive}/${request}`);
  const ctx: ToolContext = {
    principal,
    group: options.group,
    baseUrl: options.baseUrl,
    invoke: (op, target, input, call) =>
      options.invoker.invoke(principal, op, target, input, { audit: call?.audit ?? true, signal: channel.signal }),
    secretRequestUrl: (primitive, request) => pageOf({ workspace: principal.workspace, primitive, request }),
    ...channel,
  };
  try {
    const names = Object.keys(tool.actions);
    const name = (args.action as string | undefined) ?? tool.pick?.(args) ?? (names[0] as string);
    const action = tool.actions[name];
    if (action === undefined) throw new ServiceError("invalid_request", `action: must be one of ${names.join(", ")}`);
    // The `primitive` argument goes as a reference the engine resolves within the call: one
    // invocation per tool call (one round trip when the engine is remote).
    let target: Target = null;
    if ((tool.type !== undefined || tool.anyType) && args.primitive === undefined && tool.groupWide) {
      target = options.group.id;
    } else if (tool.type !== undefined || tool.anyType) {
      if (typeof args.primitive !== "string") throw new ServiceError("invalid_request", "primitive: required");
      target = {
        group: options.group.id,
        ref: args.primitive,
        ...(tool.type === undefined ? {} : { type: tool.type }),
      };
    }
    const input = {
      ...withoutUndefined(args, action.fields ?? []),
      ...(action.input === undefined ? {} : await action.input(args, ctx)),
    };
    const out = await ctx.invoke(action.op, target, input);
    return withResourceLinks(
      result(action.output === undefined ? out : await action.output(out, ctx, args)),
      tool.name,
      args,
      out,
    );
  } catch (err) {
    return errorResult(err);
  }
}

function errorResult(err: unknown): CallToolResult {
  const error = toServiceError(err);
  return result({ error: { code: error.code, message: error.message } }, true);
}

/**
 * A key tool call: the host's `KeyManager`, with the caller narrowed to the tool as for an engine
 * tool. Not an engine operation, so no audit entry of its own here: minting and revoking are
 * the control plane's audited actions (`key.mint`, `key.revoke`).
 */
async function callKeyTool(
  tool: KeyToolSpec,
  args: Record<string, any>,
  options: McpServerOptions & { keys: KeyManager },
): Promise<CallToolResult> {
  try {
    return result(await tool.run(options.keys, narrowTools(options.principal, [tool.name]), args));
  } catch (err) {
    return errorResult(err);
  }
}

/**
 * A tool as `tools/list` shows it: its input schema (unknown arguments refused), its output
 * schema (`toolOutputSchema`) and annotations derived from its operations' declarations. Built
 * once per tool for the process: every session lists the same definitions.
 */
const definitions = new Map<string, Tool>();
function toolDefinition(tool: ToolSpec | KeyToolSpec): Tool {
  let definition = definitions.get(tool.name);
  if (definition === undefined) {
    const { $schema: _schema, ...input } = z.toJSONSchema(z.strictObject(tool.shape), {
      target: "draft-7",
      io: "input",
    }) as Record<string, unknown>;
    const engineTool = "actions" in tool;
    definition = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: { ...input, type: "object" },
      outputSchema: engineTool ? toolOutputSchema(tool) : outputSchemaOf([tool.result]),
      annotations: engineTool ? toolAnnotations(tool) : keyToolAnnotations(tool),
    };
    definitions.set(tool.name, definition);
  }
  return definition;
}

/** One MCP server over the engine for one caller and group: HTTP sessions and stdio alike. */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: "prim", title: "Prim data primitives", version: VERSION },
    {
      instructions: `Data stores of group '${options.group.name}'. Start with primitive_list; address a store by id or name with the \`primitive\` argument.`,
    },
  );
  // The low-level handlers, not McpServer.registerTool: the definitions are shared by every
  // session (built once), the output schemas are unions (registerTool keeps only object
  // schemas), and invalid arguments are errors in the service's own shape.
  const { keys } = options;
  const visible = [...visibleTools(options.principal), ...visibleKeyTools(options.principal, keys)];
  const tools = new Map(visible.map((tool) => [tool.name, { spec: tool, schema: strictShape(tool) }]));
  // Tools this server has (a caller's allowlist may still refuse them): the key tools with a KeyManager only.
  const served = new Set([...TOOLS, ...(keys === undefined ? [] : KEY_TOOLS)].map((tool) => tool.name));
  server.server.registerCapabilities({ tools: { listChanged: false } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: visible.map(toolDefinition) }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (tool === undefined) {
      // A real tool this session may not use is the spec's `tool_not_allowed`, a tool error
      // like every other refusal; a name Prim does not have is a protocol error.
      if (served.has(request.params.name)) {
        const message = `tool '${request.params.name}' is outside this session's tool allowlist`;
        return result({ error: { code: "tool_not_allowed", message } }, true);
      }
      throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    }
    const parsed = tool.schema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.join(".") || (issue?.code === "unrecognized_keys" ? issue.keys.join(", ") : "");
      const message = `${field === "" ? "" : `${field}: `}${issue?.message ?? "invalid arguments"}`;
      return result({ error: { code: "invalid_request", message } }, true);
    }
    const args = parsed.data as Record<string, unknown>;
    if (!("actions" in tool.spec)) return callKeyTool(tool.spec, args, { ...options, keys: keys as KeyManager });
    return callTool(tool.spec, args, options, callChannel(server.server, extra));
  });
  registerResources(server, options);
  return server;
}

const strictShapes = new Map<string, z.ZodType>();
function strictShape(tool: ToolSpec | KeyToolSpec): z.ZodType {
  let schema = strictShapes.get(tool.name);
  if (schema === undefined) {
    schema = z.strictObject(tool.shape);
    strictShapes.set(tool.name, schema);
  }
  return schema;
}
