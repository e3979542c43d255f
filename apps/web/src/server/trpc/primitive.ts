import { narrowTools, type PrimitiveInfo, type QueryResult, type SnapshotInfo } from "@prim/wire";
import { z } from "zod";
import { inWorkspace, router, userPrincipal } from "./init";
import { PERMISSIONS } from "./permissions";

const target = z.object({ primitive: z.string().min(1) });

/**
 * One primitive: its record, pause/resume (admins: account-level in the engine), snapshots
 * (list, take, restore) and the db console (`db.query`; read-only for members). Everything through the cell's `Invoker` as `user:<id>`.
 */
export const primitiveRouter = router({
  get: inWorkspace(PERMISSIONS["primitive.get"])
    .input(target)
    .query(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(
        userPrincipal(ctx.user, input.workspace, ctx.role),
        "primitive.get",
        input.primitive,
        {},
      ),
    ),
  pause: inWorkspace(PERMISSIONS["primitive.pause"])
    .input(target.extend({ paused: z.boolean() }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<PrimitiveInfo>(
        userPrincipal(ctx.user, input.workspace, ctx.role),
        input.paused ? "primitive.pause" : "primitive.resume",
        input.primitive,
        {},
      ),
    ),
  snapshots: inWorkspace(PERMISSIONS["primitive.snapshots"])
    .input(target)
    .query(({ ctx, input }) =>
      ctx.invoker.invoke<{ data: SnapshotInfo[]; next_cursor: string | null }>(
        userPrincipal(ctx.user, input.workspace, ctx.role),
        "primitive.snapshots",
        input.primitive,
        { limit: 50 },
      ),
    ),
  snapshot: inWorkspace(PERMISSIONS["primitive.snapshot"])
    .input(target.extend({ name: z.string().max(64).optional() }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<SnapshotInfo>(
        userPrincipal(ctx.user, input.workspace, ctx.role),
        "primitive.snapshot",
        input.primitive,
        input.name === undefined || input.name === "" ? {} : { name: input.name },
      ),
    ),
  restore: inWorkspace(PERMISSIONS["primitive.restore"])
    .input(target.extend({ snapshot: z.string().min(1) }))
    .mutation(({ ctx, input }) =>
      ctx.invoker.invoke<SnapshotInfo>(
        userPrincipal(ctx.user, input.workspace, ctx.role),
        "primitive.restore",
        input.primitive,
        {
          snapshot: input.snapshot,
        },
      ),
    ),
  /** Owners and admins may write through the console; a member's is narrowed to `db_query` (read-only). */
  dbQuery: inWorkspace(PERMISSIONS["primitive.dbQuery"])
    .input(target.extend({ sql: z.string().min(1, "a statement is required").max(100_000) }))
    .mutation(({ ctx, input }) => {
      const principal = userPrincipal(ctx.user, input.workspace, ctx.role);
      return ctx.invoker.invoke<QueryResult>(
        ctx.role === "member" ? narrowTools(principal, ["db_query"]) : principal,
        "db.query",
        input.primitive,
        { sql: input.sql },
      );
    }),
});
