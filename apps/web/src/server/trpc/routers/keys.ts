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
        createdBy: ctx.actor,
      }),
    ),
  revoke: workspaceProcedure("keys.revoke")
    .input(z.object({ id: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => ctx.db.revokeKey(ctx.pool, input.id, ctx.publish, input.workspace, ctx.actor)),
});
