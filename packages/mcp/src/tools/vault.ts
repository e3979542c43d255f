import { toolInfo } from "@prim/wire";
import { z } from "zod";
import { cursorArg, limitArg, primitiveArg } from "./common.js";
import { SECRET_REQUEST_TOOL } from "./secret-request.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("vault");

export const VAULT_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("vault_list"),
    shape: {
      primitive: p,
      action: z.enum(["secrets", "grants"]).optional().describe('Default "secrets".'),
      limit: limitArg(200, 50),
      cursor: cursorArg,
    },
    actions: {
      secrets: { op: "vault.list", fields: ["limit", "cursor"] },
      grants: { op: "vault.grants", fields: ["limit", "cursor"] },
    },
  },
  {
    ...toolInfo("vault_use"),
    shape: {
      primitive: p,
      url: z.string().describe("The full https URL to call."),
      auth: z.strictObject({ bearer: z.string().describe("Name of the secret to send as a Bearer token.") }),
      method: z.string().optional().describe("HTTP method (default GET)."),
      headers: z.record(z.string(), z.string()).optional().describe("Further request headers."),
      body: z.string().optional().describe("Request body (text)."),
    },
    actions: { fetch: { op: "vault.fetch", fields: ["url", "auth", "method", "headers", "body"] } },
  },
  SECRET_REQUEST_TOOL,
];

export { MAX_SECRET_WAIT_MS, VAULT_REQUEST_RESULT, type VaultRequestResult } from "./secret-request.js";
