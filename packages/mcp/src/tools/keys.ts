import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import {
  type ControlToolInfo,
  KEY_TOOL_CATALOG,
  type KeyMintRequest,
  type KeyRevoked,
  type KeyToolName,
  type MintedKey,
  type MintedKeyInfo,
  type Principal,
} from "@prim/wire";
import { keyMintRequest, keyRevoked, mintedKey, mintedKeyList } from "@prim/wire/schemas";
import { z } from "zod";

/**
 * The key tools (`key_mint`, `key_list`, `key_revoke`; @prim/wire's `KEY_TOOL_CATALOG`): minted
 * keys for agents, over the control plane rather than an engine operation, so the host provides
 * them as a capability (`KeyManager`): apps/mcp over `@prim/db`'s `KeyManagement`, exactly what
 * `POST/GET/DELETE /v1/keys` run. Without one (the local engine, stdio) the tools do not exist.
 */

/**
 * What the host does for the key tools, as REST's `/v1/keys` does: who may (a `pk_` key; a
 * read-only one only lists), the rate limit, the change, and for a revocation its fan-out to
 * every process. Each throws a `ServiceError` to refuse; the tool answers it as a tool error.
 */
export interface KeyManager {
  mint(principal: Principal, request: KeyMintRequest): Promise<MintedKey>;
  list(principal: Principal): Promise<MintedKeyInfo[]>;
  revoke(principal: Principal, id: string): Promise<KeyRevoked>;
}

/** A key tool: its catalog entry, input shape, structured result, and the manager call it makes. */
export interface KeyToolSpec extends ControlToolInfo {
  shape: z.ZodRawShape;
  result: z.ZodType;
  run(keys: KeyManager, principal: Principal, args: Record<string, any>): Promise<unknown>;
}

const info = (name: KeyToolName): ControlToolInfo => {
  const found = KEY_TOOL_CATALOG.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`unknown key tool ${name}`);
  return found;
};

/** In the catalog's order (checked on load). */
export const KEY_TOOLS: readonly KeyToolSpec[] = checkKeyTools([
  {
    ...info("key_mint"),
    shape: keyMintRequest.shape,
    result: mintedKey,
    run: (keys, principal, args) => keys.mint(principal, args as KeyMintRequest),
  },
  {
    ...info("key_list"),
    shape: {},
    result: mintedKeyList,
    run: async (keys, principal) => ({ data: await keys.list(principal) }),
  },
  {
    ...info("key_revoke"),
    shape: {
      id: z
        .string()
        .min(1)
        .describe("The key to revoke (`key_…`, from key_mint or key_list); its subtree goes with it."),
    },
    result: keyRevoked,
    run: (keys, principal, args) => keys.revoke(principal, args.id as string),
  },
]);

function checkKeyTools(tools: KeyToolSpec[]): readonly KeyToolSpec[] {
  const served = tools.map((tool) => tool.name).join(",");
  const declared = KEY_TOOL_CATALOG.map((tool) => tool.name).join(",");
  if (served !== declared)
    throw new Error(`MCP key tools ${served} differ from @prim/wire's KEY_TOOL_CATALOG ${declared}`);
  return tools;
}

/** A key tool's annotations, from its declared access and effects (as an operation's are derived). */
export function keyToolAnnotations(tool: ControlToolInfo): ToolAnnotations {
  const writes = tool.access === "write";
  return {
    title: tool.title,
    readOnlyHint: !writes,
    destructiveHint: writes && tool.destructive,
    idempotentHint: !writes || tool.idempotent,
    openWorldHint: false,
  };
}
