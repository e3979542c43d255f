import { router, workspaceProcedure } from "../init";

/**
 * The month's usage against the plan (spec: Plans, Enforcement): the same figures as `prim admin
 * usage` (`readUsage` with the live Redis count: operations, storage, the days, the primitives
 * held and the busiest ones), and the plan's caps (Starter; Pro's included amounts
 * when billing is configured).
 */
export const usageRouter = router({
  summary: workspaceProcedure("usage.summary").query(async ({ ctx, input }) => {
    const month = ctx.db.usageMonth();
    const live = await ctx.operations(input.workspace, month);
    const report = await ctx.db.readUsage(ctx.pool, input.workspace, { month, liveOperations: live });
    const plan = report.workspace.plan;
    const pro = ctx.billing?.lib.PRO;
    return {
      ...report,
      caps: plan === "starter" ? ctx.db.STARTER_CAPS : null,
      included:
        plan === "pro" && pro !== undefined
          ? { operations: pro.includedOperations, storageBytes: pro.includedStorageBytes }
          : null,
      live: live !== null,
    };
  }),
});
