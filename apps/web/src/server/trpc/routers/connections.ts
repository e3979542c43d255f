import { z } from "zod";
import { router, workspaceProcedure } from "../init";

/** The workspace's OAuth connections (MCP clients a member authorized): listed, disconnected at once. */
export const connectionsRouter = router({
  list: workspaceProcedure("connections.list").query(async ({ ctx, input }) =>
    ctx.db.listConnections(ctx.pool, input.workspace),
  ),
  disconnect: workspaceProcedure("connections.disconnect")
    .input(z.object({ id: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => {
      await ctx.db.disconnect(ctx.pool, { workspace: input.workspace, id: input.id, actor: ctx.actor }, ctx.publish);
      return { id: input.id };
    }),
});
