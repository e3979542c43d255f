import { type SecretRequest, ServiceError, toolInfo } from "@prim/wire";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { primitiveArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

/** Longest one `vault_request_secret` call waits for the person (a request lives 15 minutes). */
export const MAX_SECRET_WAIT_MS = 10 * 60_000;
/** One wait of the engine's (`vault.request_get`'s bound): the call polls in steps this long. */
const WAIT_STEP_MS = 30_000;

/**
 * The tool's structured result: whether the secret was set, never its value. `status` is the
 * request's (`pending` when the person has not answered yet: call again with `request`);
 * `elicitation` is what the client answered when it was asked to show the page.
 */
export const VAULT_REQUEST_RESULT = z.object({
  name: z.string(),
  set: z.boolean(),
  status: z.enum(["pending", "set", "declined", "expired"]),
  request: z.string(),
  url: z.string(),
  expires_at: z.number().int(),
  version: z.number().int().nullable(),
  elicitation: z.enum(["accept", "decline", "cancel"]).optional(),
});
export type VaultRequestResult = z.infer<typeof VAULT_REQUEST_RESULT>;

function outcome(
  request: SecretRequest,
  url: string,
  elicitation?: "accept" | "decline" | "cancel",
): VaultRequestResult {
  return {
    name: request.name,
    set: request.status === "set",
    status: request.status,
    request: request.id,
    url,
    expires_at: request.expires_at,
    version: request.version,
    ...(elicitation === undefined ? {} : { elicitation }),
  };
}

/** What the client shows the person: who asks, for which secret, and the agent's own words. */
function messageOf(request: SecretRequest): string {
  return `An agent (${request.requested_by}) asks you to store the secret ${request.name} in a Prim vault. Its reason: "${request.reason}". The page opens in your browser; the value goes straight into the vault and is never shown to the agent.`;
}

/** Waits (in steps the engine bounds) until the request is answered or expires, or `waitMs` ends. */
async function waitForAnswer(request: SecretRequest, ctx: ToolContext, waitMs: number): Promise<SecretRequest> {
  const until = Date.now() + waitMs;
  let current = request;
  while (current.status === "pending" && ctx.signal?.aborted !== true) {
    const left = until - Date.now();
    if (left <= 0) break;
    await ctx.progress?.(`waiting for a person to set ${current.name}`);
    current = await ctx.invoke<SecretRequest>(
      "vault.request_get",
      current.primitive,
      { request: current.id, wait: Math.min(WAIT_STEP_MS, left) },
      { audit: false },
    );
  }
  return current;
}

/**
 * The flow of one call: show the person the page (URL-mode elicitation) when the client can,
 * then wait for their answer. A client that cannot is told the URL in an error — on the first
 * call only: a call naming an earlier `request` just waits for it.
 */
async function askPerson(
  request: SecretRequest,
  ctx: ToolContext,
  args: Record<string, any>,
  fresh: boolean,
): Promise<VaultRequestResult> {
  const url = ctx.secretRequestUrl(request.primitive, request.id);
  const waitMs = typeof args.wait === "number" ? args.wait * 1000 : MAX_SECRET_WAIT_MS;
  if (request.status !== "pending") return outcome(request, url);
  // Asked about an earlier request without waiting: how it stands, nothing shown to anyone.
  if (!fresh && waitMs === 0) return outcome(request, url);
  if (ctx.elicitUrl === undefined) {
    if (fresh) {
      throw new ServiceError(
        "invalid_request",
        `this MCP client cannot show a URL elicitation, so the secret cannot be asked for here: ask the person to open ${url} to set ${request.name} (before ${new Date(request.expires_at).toISOString()}), then call vault_request_secret with request "${request.id}" to wait for their answer`,
      );
    }
    return outcome(await waitForAnswer(request, ctx, waitMs), url);
  }
  const { action, complete } = await ctx.elicitUrl({ message: messageOf(request), url, elicitationId: request.id });
  if (action !== "accept") return outcome(request, url, action);
  const answered = await waitForAnswer(request, ctx, waitMs);
  if (answered.status !== "pending") await complete();
  return outcome(answered, url, action);
}

export const SECRET_REQUEST_TOOL: ToolSpec = {
  ...toolInfo("vault_request_secret"),
  streams: true,
  shape: {
    primitive: primitiveArg("vault"),
    name: z
      .string()
      .optional()
      .describe("The secret's name (A-Z, 0-9, _; like OPENAI_API_KEY). Required unless `request` is given."),
    reason: z
      .string()
      .optional()
      .describe("Why the secret is needed, in a sentence the person will read (at most 500 characters)."),
    allow: z
      .strictObject({
        hosts: z.array(z.string()).describe('Hosts the secret may be sent to ("api.example.com", "*.example.com").'),
        methods: z.array(z.string()).optional().describe("HTTP methods allowed (default: all)."),
      })
      .optional()
      .describe("The grant to set with the secret, so vault_use can send it there; the person sees it before setting."),
    request: z
      .string()
      .optional()
      .describe(
        "The id of an earlier request (from this tool's error or result): waits for the person's answer instead of asking again.",
      ),
    wait: z
      .number()
      .int()
      .min(0)
      .max(MAX_SECRET_WAIT_MS / 1000)
      .optional()
      .describe(
        `Seconds to wait for the person's answer (default and most ${MAX_SECRET_WAIT_MS / 1000}); with \`request\`, 0 only says how it stands.`,
      ),
  },
  pick: (args) => (args.request === undefined ? "ask" : "wait"),
  actions: {
    ask: {
      op: "vault.request",
      fields: ["name", "reason", "allow"],
      input: (_args, ctx) => {
        // An in-process stdio server (`prim mcp` without a running `prim dev`) serves no page.
        if (!/^https?:\/\//.test(ctx.secretRequestUrl("p", "r"))) {
          throw new ServiceError(
            "invalid_request",
            "this MCP server has no page where a person could type the secret (stdio without a running engine): start `prim dev` and connect through it, or have an account store the secret (PUT /v1/primitives/{id}/secrets/{NAME})",
          );
        }
        return {};
      },
      output: (request: SecretRequest, ctx, args) => askPerson(request, ctx, args, true),
      result: VAULT_REQUEST_RESULT,
    },
    wait: {
      op: "vault.request_get",
      input: (args) => ({ request: args.request, wait: 0 }),
      output: (request: SecretRequest, ctx, args) => askPerson(request, ctx, args, false),
      result: VAULT_REQUEST_RESULT,
    },
  },
};
