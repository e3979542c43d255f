import { z } from "zod";
import { router, workspaceProcedure } from "../init";

export const keyInput = z.object({
  name: z.string().trim().max(80).optional(),
  group: z.string().min(1).optional(),
  tools: z
    .array(z.string().regex(/^[a-z_*]{1,64}$/, "a tool name or pattern (a-z, _ and *)"))
    .min(1)
    .optional(),
  /** Read-only: every call that writes is refused (engine.invoke), whatever the tools. */
  readOnly: z.boolean().optional(),
  /** When it stops working (ms since the epoch; checked ahead of now by @prim/db). */
  expiresAt: z.number().int().optional(),
  /** CIDRs its client address must fall in (checked by @prim/db with node's BlockList). */
  ipAllow: z.array(z.string().trim().min(1).max(64)).min(1).max(64).optional(),
  /** Its operation budget: in total, or per UTC day or month. */
  budget: z
    .union([
      z.strictObject({ total: z.number().int().positive() }),
      z.strictObject({ per: z.enum(["day", "month"]), limit: z.number().int().positive() }),
    ])
    .optional(),
});

/** The workspace's API keys: listed without their secret, created (shown once), revoked at once. */
export const keysRouter = router({
  list: workspaceProcedure("keys.list").query(({ ctx, input }) => ctx.db.listKeys(ctx.pool, input.workspace)),
  create: workspaceProcedure("keys.create")
    .input(keyInput)
    .mutation(async ({ ctx, input }) =>
      // The key is in this answer only: it is stored as its hash.
      ctx.db.createKey(ctx.pool, {
        workspace: input.workspace,
        group: input.group,
        tools: input.tools,
        name: input.name,
        readOnly: input.readOnly,
        expiresAt: input.expiresAt,
        ipAllow: input.ipAllow,
        budget: input.budget,
        createdBy: ctx.actor,
      }),
    ),
  revoke: workspaceProcedure("keys.revoke")
    .input(z.object({ id: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => ctx.db.revokeKey(ctx.pool, input.id, ctx.publish, input.workspace, ctx.actor)),
});
