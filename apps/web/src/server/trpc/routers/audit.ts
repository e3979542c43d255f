import { z } from "zod";
import { router, workspaceProcedure } from "../init";

/**
 * The audit trail (Pro and up; the engine refuses Starter with `plan_limit`), newest first,
 * paged: data entries and the control plane's (`type: "workspace"`: keys, members, plan, …).
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
    .query(({ ctx, input }) => {
      const { workspace: _, ...filters } = input;
      const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined && v !== ""));
      return ctx.invoker.invoke<{
        data: {
          id: string;
          ts: number;
          group: string;
          primitive: string;
          instance: string | null;
          actor: string;
          action: string;
          target: string | null;
          detail: Record<string, unknown> | null;
        }[];
        next_cursor: string | null;
      }>(ctx.principal, "audit.list", null, { ...query, limit: 50 });
    }),
});
