import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { workspaceProcedure } from "../init";

/**
 * `workspace.delete` (owners; CLOUD.md, Credentials: "workspace deletion"): the workspace's name
 * typed again (`name`), then, in this order —
 * 1. every credential ends at once (keys revoked, OAuth connections and their tokens ended,
 *    invitations withdrawn; published on `prim:revoked`): `@prim/db`'s `closeWorkspace`, which
 *    checks the name and the owner again under the workspace's lock;
 * 2. a live Stripe subscription is canceled at once (`@prim/billing`'s `cancelForDeletion`);
 * 3. every group is deleted in the cell that serves the workspace, with its primitives, files,
 *    snapshots and blobs (the engine's `group.delete` with `force`, as this owner: audited there);
 * 4. the workspace row goes with every control row (members, keys, usage, billing rows, the
 *    placement), recorded as `workspace.delete` (`dropWorkspace`).
 * Interrupted (a cell or Stripe not answering), the error says so and deleting again finishes it.
 */
export const deleteWorkspace = workspaceProcedure("workspace.delete")
  .input(z.object({ name: z.string().max(200) }))
  .mutation(async ({ ctx, input }) => {
    const ws = await ctx.db.readWorkspace(ctx.pool, input.workspace);
    if (ws === null) throw new TRPCError({ code: "NOT_FOUND", message: `workspace '${input.workspace}' not found` });
    if (input.name !== ws.name) {
      throw new TRPCError({
        code: "BAD_REQUEST",
        message: `name: type the workspace's name '${ws.name}' to delete it`,
      });
    }
    const { subscription } = await ctx.db.billingState(ctx.pool, input.workspace);
    const live = subscription !== null && !["canceled", "unpaid", "incomplete_expired"].includes(subscription.status);
    if (live && ctx.billing === null) {
      throw new TRPCError({
        code: "PRECONDITION_FAILED",
        message: "the workspace has a subscription and billing is not configured on this server to cancel it",
      });
    }
    const closed = await ctx.db.closeWorkspace(
      ctx.pool,
      { workspace: input.workspace, name: input.name, user: ctx.user.id, actor: ctx.actor },
      ctx.publish,
    );
    const stripeSub = closed.subscription;
    const canceled = await unfinished("Stripe did not cancel the subscription", async () => {
      if (stripeSub === null || ctx.billing === null) return null;
      await ctx.billing.lib.cancelForDeletion(ctx.billing.stripe, stripeSub.id);
      return stripeSub.id;
    });
    await unfinished("the cell did not delete every group", async () => {
      for (const group of closed.groups) {
        await ctx.invoker.invoke(ctx.principal, "group.delete", group.id, { force: true });
      }
    });
    const dropped = await ctx.db.dropWorkspace(ctx.pool, {
      workspace: input.workspace,
      actor: ctx.actor,
      detail: {
        plan: closed.plan,
        groups: closed.groups.map((g) => g.name),
        keys_revoked: closed.keys,
        connections_ended: closed.connections,
        invitations_withdrawn: closed.invitations,
        subscription_canceled: canceled,
      },
    });
    return { id: dropped.id, name: dropped.name };
  });

/**
 * A step after the credentials ended: its failure says the deletion is half done and how to
 * finish it (deleting again resumes: each step can run twice).
 */
async function unfinished<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (cause) {
    throw new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: `Keys and apps are disconnected, but ${what} (${(cause as Error).message}); delete the workspace again to finish`,
      cause,
    });
  }
}
