import { z } from "zod";
import { cursorArg, limitArg, primitiveArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("vault");

export const VAULT_TOOLS: ToolSpec[] = [
  {
    name: "vault_list",
    title: "List secrets and grants",
    description:
      '"secrets" (default): the secret names with their version and grant (which hosts and methods may receive them). "grants": the grants. Values are never shown; use vault_use to make a request with a secret.',
    type: "vault",
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
    name: "vault_use",
    title: "Make a request with a secret",
    description:
      "Makes an HTTP request to `url` with a stored secret injected as `Authorization: Bearer <secret>` (`auth: { bearer: NAME }`), without you ever seeing the value. Only hosts and methods the secret's grant allows. Returns { status, headers, body } with the secret redacted.",
    type: "vault",
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
];
