import type { KeyManagement } from "@prim/db";
import { type AnyOperation, invalid, type Limiter } from "@prim/engine";
import { keyMintRequest } from "@prim/wire/schemas";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * Minted keys over REST (issue 41, item 2; CLOUD.md, Credentials): `POST /v1/keys` mints a
 * child of the calling key at most as wide as it, `GET /v1/keys` lists the caller's subtree,
 * `DELETE /v1/keys/{id}` revokes one key of it with everything under it, in every process at
 * once. Any `pk_` key may call them, a workspace key included (it sees the keys it minted, like
 * any key: the dashboard shows every key); a read-only one only lists; OAuth tokens are MCP-only
 * and never reach them, `pa_` tokens are refused. The checks and steps are `@prim/db`'s
 * `KeyManagement`, shared with apps/mcp's `key_*` tools, so both answer alike.
 */

export interface KeysDeps {
  keys: KeyManagement;
  /**
   * With limits on: each call takes a token from the calling key's bucket, as every request
   * does, declared as `rateAs` (`KEY_MANAGEMENT_RATE_AS`, an operation that is not metered: key
   * management counts as no operation, spec "What counts as an operation").
   */
  limiter?: Limiter;
  rateAs?: AnyOperation;
}

export function mountKeys(app: FastifyInstance, deps: KeysDeps): void {
  const call = (req: FastifyRequest, reply: FastifyReply) => ({
    principal: req.principal,
    admit: async () => {
      if (deps.limiter === undefined || deps.rateAs === undefined) return;
      const headers = await deps.limiter.admit({ principal: req.principal, op: deps.rateAs, target: null, input: {} });
      if (headers !== undefined) reply.headers(headers);
    },
  });

  app.post("/v1/keys", async (req, reply) => {
    const parsed = keyMintRequest.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(`body: ${issue === undefined ? "invalid" : `${issue.path.join(".") || "body"}: ${issue.message}`}`);
    }
    const minted = await deps.keys.mint(call(req, reply), parsed.data);
    reply.code(201);
    return minted;
  });

  app.get("/v1/keys", async (req, reply) => ({ data: await deps.keys.list(call(req, reply)) }));

  app.delete<{ Params: { id: string } }>("/v1/keys/:id", async (req, reply) =>
    deps.keys.revoke(call(req, reply), req.params.id),
  );
}
