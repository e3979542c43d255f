import type { PrimitiveInfo, SecretRequest } from "@prim/wire";
import { z } from "zod";
import { router, workspaceProcedure } from "../init";

const target = z.object({
  primitive: z.string().min(1).max(64),
  request: z.string().regex(/^sreq_[A-Za-z0-9_-]{22}$/, "not a secret request id"),
});

/**
 * A secret request an agent made (`vault_request_secret`): the page a person opens from the
 * agent's URL elicitation. Anyone with data access sees it; setting the value or declining is
 * storing a secret, account-level in the engine (owners and admins). The value goes through
 * `vault.request_fulfil` once and is never returned: the answer is the request, not the secret.
 */
export const secretRequestRouter = router({
  get: workspaceProcedure("secretRequest.get")
    .input(target)
    .query(async ({ ctx, input }) => {
      const request = await ctx.invoker.invoke<SecretRequest>(ctx.principal, "vault.request_get", input.primitive, {
        request: input.request,
      });
      const vault = await ctx.invoker.invoke<PrimitiveInfo>(ctx.principal, "primitive.get", input.primitive, {});
      // Who asked, named as the audit log names it (a key's name and start, an app, a member).
      const actors = await ctx.db.resolveActors(ctx.pool, input.workspace, [request.requested_by]);
      const askedBy = actors[request.requested_by] ?? null;
      return { request, askedBy, vault: { id: vault.id, name: vault.name, group: vault.group } };
    }),
  set: workspaceProcedure("secretRequest.set")
    .input(target.extend({ value: z.string().min(1, "type the value") }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<SecretRequest>(ctx.principal, "vault.request_fulfil", input.primitive, {
        request: input.request,
        value: input.value,
      }),
    ),
  decline: workspaceProcedure("secretRequest.decline")
    .input(target)
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<SecretRequest>(ctx.principal, "vault.request_decline", input.primitive, {
        request: input.request,
      }),
    ),
});
