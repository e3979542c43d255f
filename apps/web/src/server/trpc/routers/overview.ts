import { workspaceProcedure } from "../init";

/**
 * The Overview page and the Connect dialog (issue 39 item 2): what this deployment's clients
 * connect to, and the workspace at a glance. Spread into the `workspace` router.
 */
export const overviewProcedures = {
  /**
   * The REST base URL (routes under `/v1`), the MCP endpoint (one for every group: a key scoped
   * to a group reaches it, a workspace key names it in `X-Service-Group`; OAuth tokens are issued
   * for exactly this URL) and the groups to pick from.
   */
  connect: workspaceProcedure("workspace.connect").query(async ({ ctx, input }) => ({
    apiUrl: ctx.apiUrl,
    mcpUrl: ctx.mcpUrl,
    groups: (await ctx.db.listGroups(ctx.pool, input.workspace)).map((g) => g.name),
  })),
  /** Counts (groups, primitives, live keys, keys used, connected apps) and this month's operations. */
  overview: workspaceProcedure("workspace.overview").query(async ({ ctx, input }) => {
    // The usage page's figure for the month (`readUsage` with the live Redis count).
    const month = ctx.db.usageMonth();
    const [counts, live] = await Promise.all([
      ctx.db.workspaceCounts(ctx.pool, input.workspace),
      ctx.operations(input.workspace, month),
    ]);
    const usage = await ctx.db.readUsage(ctx.pool, input.workspace, { month, liveOperations: live });
    return { ...counts, plan: usage.workspace.plan, month, operations: usage.operations };
  }),
};
