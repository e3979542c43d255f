import {
  type ApiKeyResolver,
  type KeyBudgets,
  listMintedKeys,
  mintKey,
  type Revocations,
  revokeMintedKey,
} from "@prim/db";
import { type AnyOperation, invalid, type Limiter, ServiceError } from "@prim/engine";
import { bearerToken } from "@prim/wire";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type pg from "pg";
import { z } from "zod";

/**
 * Minted keys over REST (issue 41, item 2; CLOUD.md, Credentials): `POST /v1/keys` mints a
 * child of the calling key at most as wide as it, `GET /v1/keys` lists the caller's subtree,
 * `DELETE /v1/keys/{id}` revokes one key of it with everything under it, in every process at
 * once. Any `pk_` key may call them, a workspace key included (it sees the keys it minted, like
 * any key: the dashboard shows every key); OAuth tokens are MCP-only and never reach them.
 */

/** The mint body. Unknown fields are refused, so a property this server does not know is never dropped silently. */
const MintBody = z
  .object({
    name: z.string().min(1).max(100).optional(),
    group: z.string().min(1).max(128).nullable().optional(),
    tools: z.array(z.string()).max(100).optional(),
    read_only: z.boolean().optional(),
    /** Ms since the epoch, no later than the caller's own expiry. */
    expires_at: z.number().int().optional(),
    /** CIDRs, each inside one of the caller's (when it has an allowlist). */
    ip_allow: z.array(z.string()).max(100).optional(),
    /** Required under a budgeted caller, and carved out of what it has left. */
    budget: z
      .union([
        z.object({ total: z.number().int() }).strict(),
        z.object({ per: z.enum(["day", "month"]), limit: z.number().int() }).strict(),
      ])
      .optional(),
  })
  .strict();

const KEY_ID_RE = /^key_[0-9a-z]{26}$/;

/**
 * The calling key's id: only `pk_` keys have one (`key:<id>`). A `pa_` token (a key narrowed
 * offline) resolves to its key's actor too, but its caveats live in the token, not in the key's
 * row that minting narrows from: a child minted through it could drop them (a one-hour token
 * minting a key that never expires). It is refused; mint from the key itself.
 */
function callerKey(req: FastifyRequest): string {
  const { principal } = req;
  if (!principal.actor.startsWith("key:"))
    throw new ServiceError("forbidden", "only an API key can manage minted keys");
  if (bearerToken(req.headers.authorization)?.startsWith("pa_") === true) {
    throw new ServiceError(
      "forbidden",
      "an attenuated (pa_) token cannot manage minted keys: its caveats would not bind the child; use the key itself",
    );
  }
  return principal.actor.slice("key:".length);
}

export interface KeysDeps {
  pool: pg.Pool;
  revocations: Revocations;
  resolver: ApiKeyResolver;
  /**
   * With limits on: each call takes a token from the calling key's bucket, as every request
   * does, declared as `rateAs` (an operation that is not metered: key management counts as no
   * operation, spec "What counts as an operation").
   */
  limiter?: Limiter;
  rateAs?: AnyOperation;
  /** With limits on: a child's budget is carved out of its parent's (and given back on revocation). */
  budgets?: KeyBudgets;
}

export function mountKeys(app: FastifyInstance, deps: KeysDeps): void {
  const admit = async (req: FastifyRequest, reply: FastifyReply): Promise<string> => {
    const caller = callerKey(req);
    if (deps.limiter !== undefined && deps.rateAs !== undefined) {
      const headers = await deps.limiter.admit({ principal: req.principal, op: deps.rateAs, target: null, input: {} });
      if (headers !== undefined) reply.headers(headers);
    }
    return caller;
  };
  // Dropped here at once, then every other process is told (the fan-out reaches this one too, later).
  const publish = async (hash: string) => {
    deps.resolver.forget(hash);
    await deps.revocations.publish(hash);
  };
  app.post("/v1/keys", async (req, reply) => {
    const caller = await admit(req, reply);
    const parsed = MintBody.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(`body: ${issue === undefined ? "invalid" : `${issue.path.join(".") || "body"}: ${issue.message}`}`);
    }
    const body = parsed.data;
    const minted = await mintKey(
      deps.pool,
      {
        parent: caller,
        workspace: req.principal.workspace,
        name: body.name,
        group: body.group,
        tools: body.tools,
        readOnly: body.read_only,
        expiresAt: body.expires_at,
        ipAllow: body.ip_allow,
        budget: body.budget,
      },
      deps.budgets,
    );
    reply.code(201);
    return minted;
  });

  app.get("/v1/keys", async (req, reply) => ({ data: await listMintedKeys(deps.pool, await admit(req, reply)) }));

  app.delete<{ Params: { id: string } }>("/v1/keys/:id", async (req, reply) => {
    const caller = await admit(req, reply);
    const { id } = req.params;
    if (!KEY_ID_RE.test(id)) throw new ServiceError("not_found", `key '${id.slice(0, 64)}'`);
    return revokeMintedKey(deps.pool, { caller, workspace: req.principal.workspace, id }, publish, deps.budgets);
  });
}
