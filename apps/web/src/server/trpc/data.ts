import { PRIMITIVE_TYPES, type PrimitiveInfo } from "@prim/wire";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { inWorkspace, router, userPrincipal } from "./init";
import { PERMISSIONS } from "./permissions";

const PAGE = 50;
const name = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lower-case letters, digits, _ and -, up to 63");

/**
 * Groups, primitives and the kv browser: every data call goes through the cell's `Invoker` as
 * the user (`user:<id>`), so scope, limits and audit are the engine's. Lists are paged.
 */
/** The month's usage against the plan (spec: Plans), the day-by-day figures for a chart. */
export const usageRouter = router({
  summary: inWorkspace(PERMISSIONS["usage.summary"]).query(async ({ ctx, input }) => {
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

/**
 * The audit trail (Pro and up; the engine refuses Starter with `plan_limit`), newest first,
 * paged: data entries and the control plane's (`type: "workspace"`: keys, members, plan, …).
 */
export const auditRouter = router({
  list: inWorkspace(PERMISSIONS["audit.list"])
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
      const { workspace, ...filters } = input;
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
      }>(userPrincipal(ctx.user, workspace, ctx.role), "audit.list", null, { ...query, limit: 50 });
    }),
});

export const dataRouter = router({
  /** Group names of the workspace (control-plane rows: members list no groups through the engine). */
  groups: inWorkspace(PERMISSIONS["data.groups"]).query(({ ctx, input }) =>
    ctx.db.listGroups(ctx.pool, input.workspace),
  ),
  createGroup: inWorkspace(PERMISSIONS["data.createGroup"])
    .input(z.object({ name }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke(userPrincipal(ctx.user, input.workspace, ctx.role), "group.create", null, {
        name: input.name,
      }),
    ),
  primitives: inWorkspace(PERMISSIONS["data.primitives"])
    .input(z.object({ group: z.string().min(1), cursor: z.string().optional() }))
    .query(({ ctx, input }) =>
      ctx.invoker.invoke<{ data: PrimitiveInfo[]; next_cursor: string | null }>(
        userPrincipal(ctx.user, input.workspace, ctx.role),
        "primitive.list",
        null,
        { group: input.group, limit: PAGE, ...(input.cursor === undefined ? {} : { cursor: input.cursor }) },
      ),
    ),
  createPrimitive: inWorkspace(PERMISSIONS["data.createPrimitive"])
    .input(z.object({ group: z.string().min(1), name, type: z.enum(PRIMITIVE_TYPES) }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(userPrincipal(ctx.user, input.workspace, ctx.role), "primitive.create", null, {
        name: input.name,
        type: input.type,
        group: input.group,
      }),
    ),
  /** Deleting needs the primitive's name typed again (`confirm`). */
  deletePrimitive: inWorkspace(PERMISSIONS["data.deletePrimitive"])
    .input(z.object({ id: z.string().min(1), confirm: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const principal = userPrincipal(ctx.user, input.workspace, ctx.role);
      const primitive = await ctx.invoker.invoke<PrimitiveInfo>(principal, "primitive.get", input.id, {});
      if (input.confirm !== primitive.name) {
        throw new TRPCError({ code: "BAD_REQUEST", message: `confirm: type the name '${primitive.name}' to delete` });
      }
      await ctx.invoker.invoke(principal, "primitive.delete", input.id, {});
      return { id: input.id };
    }),
  kvList: inWorkspace(PERMISSIONS["data.kvList"])
    .input(
      z.object({
        primitive: z.string().min(1),
        prefix: z.string().max(512).default(""),
        cursor: z.string().optional(),
      }),
    )
    .query(({ ctx, input }) =>
      ctx.invoker.invoke<{
        data: { key: string; value?: unknown; expires_at?: number | null }[];
        next_cursor: string | null;
      }>(userPrincipal(ctx.user, input.workspace, ctx.role), "kv.list", input.primitive, {
        prefix: input.prefix,
        limit: PAGE,
        values: true,
        ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
      }),
    ),
});
