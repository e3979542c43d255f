import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { inWorkspace, router } from "./init";
import { PERMISSIONS } from "./permissions";

/**
 * Workspace settings only owners decide. "Allow secret export" (CLOUD.md, Credentials): whether
 * group archives may carry the workspace's vault values for a key other than its own; off by
 * default, each switch an audit entry (`secret_export.enable` / `.disable`, actor `user:<id>`).
 */
export const settingsRouter = router({
  secretExport: inWorkspace(PERMISSIONS["settings.secretExport"]).query(async ({ ctx, input }) => {
    const setting = await ctx.db.readSecretExport(ctx.pool, input.workspace);
    if (setting === null)
      throw new TRPCError({ code: "NOT_FOUND", message: `workspace '${input.workspace}' not found` });
    return { enabled: setting.enabled };
  }),
  setSecretExport: inWorkspace(PERMISSIONS["settings.setSecretExport"])
    .input(z.object({ enabled: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const { workspace } = await ctx.db.setSecretExport(ctx.pool, {
        workspace: input.workspace,
        enabled: input.enabled,
        actor: `user:${ctx.user.id}`,
      });
      return { enabled: workspace.secret_export };
    }),
});
