import { PRIMITIVE_TYPES, type PrimitiveInfo } from "@prim/wire";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { router, workspaceProcedure } from "../init";

const PAGE = 50;
const name = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lower-case letters, digits, _ and -, up to 63");

/**
 * Groups, primitives and the kv browser: every data call goes through the cell's `Invoker` as
 * the user (`user:<id>`), so scope, limits and audit are the engine's. Lists are paged.
 */
export const dataRouter = router({
  /** Group names of the workspace (control-plane rows: members list no groups through the engine). */
  groups: workspaceProcedure("data.groups").query(({ ctx, input }) => ctx.db.listGroups(ctx.pool, input.workspace)),
  createGroup: workspaceProcedure("data.createGroup")
    .input(z.object({ name }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke(ctx.principal, "group.create", null, {
        name: input.name,
      }),
    ),
  primitives: workspaceProcedure("data.primitives")
    .input(z.object({ group: z.string().min(1), cursor: z.string().optional() }))
    .query(({ ctx, input }) =>
      ctx.invoker.invoke<{ data: PrimitiveInfo[]; next_cursor: string | null }>(ctx.principal, "primitive.list", null, {
        group: input.group,
        limit: PAGE,
        ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
      }),
    ),
  createPrimitive: workspaceProcedure("data.createPrimitive")
    .input(z.object({ group: z.string().min(1), name, type: z.enum(PRIMITIVE_TYPES) }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(ctx.principal, "primitive.create", null, {
        name: input.name,
        type: input.type,
        group: input.group,
      }),
    ),
  /** Deleting needs the primitive's name typed again (`confirm`). */
  deletePrimitive: workspaceProcedure("data.deletePrimitive")
    .input(z.object({ id: z.string().min(1), confirm: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const primitive = await ctx.invoker.invoke<PrimitiveInfo>(ctx.principal, "primitive.get", input.id, {});
      if (input.confirm !== primitive.name) {
        throw new TRPCError({ code: "BAD_REQUEST", message: `confirm: type the name '${primitive.name}' to delete` });
      }
      await ctx.invoker.invoke(ctx.principal, "primitive.delete", input.id, {});
      return { id: input.id };
    }),
  kvList: workspaceProcedure("data.kvList")
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
      }>(ctx.principal, "kv.list", input.primitive, {
        prefix: input.prefix,
        limit: PAGE,
        values: true,
        ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
      }),
    ),
});
