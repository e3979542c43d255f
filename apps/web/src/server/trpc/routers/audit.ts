import { z } from "zod";
import { type AuditEntry, targetAsActor } from "../../../lib/audit";
import { router, workspaceProcedure } from "../init";

/**
 * The audit trail (Pro and up; the engine refuses Starter with `plan_limit`), newest first,
 * paged: data entries and the control plane's (`type: "workspace"`: keys, members, plan, …),
 * with the page's actors named (`resolveActors`: emails, key names with their start, apps).
 */
export const auditRouter = router({
  list: workspaceProcedure("audit.list")
    .input(
      z.object({
        type: z.string().max(32).optional(),
        action: z.string().max(100).optional(),
        actor: z.string().max(200).optional(),
        group: z.string().max(64).optional(),
        cursor: z.string().optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { workspace: _, ...filters } = input;
      const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined && v !== ""));
      const page = await ctx.invoker.invoke<{
        data: AuditEntry[];
        next_cursor: string | null;
      }>(ctx.principal, "audit.list", null, { ...query, limit: 50 });
      // Every actor of the page — and the keys, members and apps the control plane's entries
      // act on — named in one query (a removed member or revoked key still is).
      const targets = page.data.map(targetAsActor).filter((t): t is string => t !== null);
      const actors = await ctx.db.resolveActors(ctx.pool, input.workspace, [
        ...page.data.map((e) => e.actor),
        ...targets,
      ]);
      return { ...page, actors };
    }),
});
