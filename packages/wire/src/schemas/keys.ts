import { z } from "zod";
import type * as W from "../index.js";
import { same } from "./same.js";

/**
 * Minted keys (cloud, issue 41): what `POST /v1/keys` and the MCP tool `key_mint` take, and what
 * the REST routes and the MCP tools `key_mint`, `key_list`, `key_revoke` answer. One declaration
 * for both edges: REST validates its body with `keyMintRequest`, MCP serves its shape as the
 * tool's input schema (the descriptions are for the model).
 */

const ms = z.number().int().describe("ms since the Unix epoch");
const tools = z.array(z.string()).nullable().describe("Tool names or patterns; null: every tool");
const budget = z.union([
  z.strictObject({ total: z.number().int() }),
  z.strictObject({ per: z.enum(["day", "month"]), limit: z.number().int() }),
]);

/** Unknown fields are refused, so a property this server does not know is never dropped silently. */
export const keyMintRequest = same<W.KeyMintRequest>()(
  z.strictObject({
    name: z.string().min(1).max(100).optional().describe("A label for the new key (shown in listings)."),
    group: z
      .string()
      .min(1)
      .max(128)
      .nullable()
      .optional()
      .describe("The group the key reaches (name or id); null: every group. Omitted: the caller's."),
    tools: z
      .array(z.string())
      .max(100)
      .optional()
      .describe("Tool allowlist: names or patterns like \"kv_*\", each within the caller's. Omitted: the caller's."),
    read_only: z
      .boolean()
      .optional()
      .describe("true: every call that writes is refused. Omitted: the caller's (a read-only caller mints none)."),
    expires_at: z
      .number()
      .int()
      .optional()
      .describe("When the key stops working, ms since the Unix epoch; no later than the caller's own expiry."),
    ip_allow: z
      .array(z.string())
      .max(100)
      .optional()
      .describe("Client addresses allowed (CIDRs), each inside one of the caller's. Omitted: the caller's."),
    budget: budget
      .optional()
      .describe(
        "Operations it may spend: { total } or { per: 'day'|'month', limit }. Required when the caller has a budget: the same kind, carved out of what the caller has left.",
      ),
  }),
);

/** What every listed or minted key shows of itself. */
const keyShape = {
  id: z.string(),
  name: z.string().nullable(),
  group: z.string().nullable(),
  tools,
  read_only: z.boolean(),
  expires_at: ms.nullable(),
  ip_allow: z.array(z.string()).nullable(),
  budget: budget.nullable(),
};

export const mintedKey = same<W.MintedKey>()(
  z
    .object({
      ...keyShape,
      key: z.string().describe("The secret (`pk_…`): shown this once, never again"),
      parent: z.string().describe("The id of the key that minted it"),
      created_at: ms,
    })
    .meta({ id: "MintedKey" }),
);

export const mintedKeyInfo = same<W.MintedKeyInfo>()(
  z
    .object({
      ...keyShape,
      start: z.string().describe("The key's first 8 characters"),
      parent: z.string(),
      depth: z.number().int(),
      created_at: ms,
      last_used_at: ms.nullable(),
      revoked_at: ms.nullable(),
    })
    .meta({ id: "MintedKeyInfo" }),
);

/** `GET /v1/keys` and `key_list`: the caller's subtree, oldest first. */
export const mintedKeyList = z.object({ data: z.array(mintedKeyInfo) });

export const keyRevoked = same<W.KeyRevoked>()(
  z
    .object({
      id: z.string(),
      revoked_at: ms,
      revoked: z.array(z.string()).describe("Every key revoked: the key, then the keys under it"),
    })
    .meta({ id: "KeyRevoked" }),
);
