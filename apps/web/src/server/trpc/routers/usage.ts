import { router, workspaceProcedure } from "../init";

/** The month's usage against the plan (spec: Plans), the day-by-day figures for a chart. */
export const usageRouter = router({
  summary: workspaceProcedure("usage.summary").query(async ({ ctx, input }) => {
    const month = new Date().toISOString().slice(0, 7).replace("-", "");
    const live = await ctx.operations(input.workspace, month);
    const report = await ctx.db.readUsage(ctx.pool, input.workspace, { month, liveOperations: live });
    const starter = report.workspace.plan === "starter";
    return {
      ...report,
      primitives: await ctx.db.countPrimitives(ctx.pool, input.workspace),
      caps: starter ? ctx.db.STARTER_CAPS : null,
      live: live !== null,
    };
  }),
});
