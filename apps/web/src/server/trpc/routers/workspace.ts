import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { authed, router, workspaceProcedure } from "../init";
import { overviewProcedures } from "./overview";
import { deleteWorkspace } from "./workspace-delete";

export const workspaceName = z.string().trim().min(1, "a name is required").max(80, "at most 80 characters");

/** The signed-in user's workspaces: listed, created (they own it), renamed, deleted (workspace-delete.ts). */
export const workspaceRouter = router({
  list: authed.query(({ ctx }) => ctx.db.workspacesOf(ctx.pool, ctx.user.id)),
  create: authed.input(z.object({ name: workspaceName })).mutation(async ({ ctx, input }) => {
    const { workspace } = await ctx.db.createWorkspace(ctx.pool, {
      name: input.name,
      ownerId: ctx.user.id,
      key: false,
      actor: `user:${ctx.user.id}`,
    });
    return workspace;
  }),
  rename: workspaceProcedure("workspace.rename")
    .input(z.object({ name: workspaceName }))
    .mutation(({ ctx, input }) =>
      ctx.db.renameWorkspace(ctx.pool, { workspace: input.workspace, name: input.name, actor: ctx.actor }),
    ),
  delete: deleteWorkspace,
  ...overviewProcedures,
});

/**
 * Workspace settings only owners decide. "Allow secret export" (CLOUD.md, Credentials): whether
 * group archives may carry the workspace's vault values for a key other than its own; off by
 * default, each switch an audit entry (`secret_export.enable` / `.disable`, actor `user:<id>`).
 */
export const settingsRouter = router({
  secretExport: workspaceProcedure("settings.secretExport").query(async ({ ctx, input }) => {
    const setting = await ctx.db.readSecretExport(ctx.pool, input.workspace);
    if (setting === null)
      throw new TRPCError({ code: "NOT_FOUND", message: `workspace '${input.workspace}' not found` });
    return { enabled: setting.enabled };
  }),
  setSecretExport: workspaceProcedure("settings.setSecretExport")
    .input(z.object({ enabled: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const { workspace } = await ctx.db.setSecretExport(ctx.pool, {
        workspace: input.workspace,
        enabled: input.enabled,
        actor: ctx.actor,
      });
      return { enabled: workspace.secret_export };
    }),
});
