import { type PrimitiveInfo, ServiceError } from "@prim/wire";
import { z } from "zod";
import { router, workspaceProcedure } from "../init";

/** A page of the delivery log. */
const DELIVERY_PAGE = 20;

const id = z.string().min(1).max(64);

/** The create form, as `POST /v1/webhooks` takes it: one of group and primitive, an optional filter. */
export const webhookInput = z.object({
  url: z.string().trim().min(1, "a URL").max(2048),
  group: z.string().min(1).max(128).optional(),
  primitive: z.string().min(1).max(128).optional(),
  filter: z
    .strictObject({
      types: z.array(z.string().min(1).max(16)).min(1).max(7).optional(),
      ops: z.array(z.string().trim().min(1).max(32)).min(1).max(20).optional(),
      prefix: z.string().min(1).max(512).optional(),
    })
    .optional(),
  description: z.string().trim().max(200).optional(),
});

/** Webhooks are Pro's (the API answers Starter 403 `plan_limit`; so do these). */
function requirePro(plan: string): void {
  if (plan === "starter")
    throw new ServiceError("plan_limit", "webhooks need the Pro plan (Starter has the change feeds)");
}

/**
 * Webhook endpoints (issue 42, item 3), owners and admins: listed, deleted, enabled and their
 * delivery log read and redelivered through @prim/db with the user as actor (`user:<id>`), each
 * scoped to the workspace (another's id is not found). Creating goes to the cell
 * (`ctx.cell.createWebhook`: the feed's head is an engine read and the secret is sealed with the
 * cell's master key), through the same path as `POST /v1/webhooks`.
 */
export const webhooksRouter = router({
  /** The endpoints, a primitive's with its name and group (read through the engine, as the data pages do). */
  list: workspaceProcedure("webhooks.list").query(async ({ ctx, input }) => {
    requirePro(ctx.plan);
    const endpoints = await ctx.db.listWebhooks(ctx.pool, input.workspace);
    return Promise.all(
      endpoints.map(async (e) => {
        if (e.primitive === null) return { ...e, primitive_info: null };
        const info = await ctx.invoker
          .invoke<PrimitiveInfo>(ctx.principal, "primitive.get", e.primitive, {})
          .catch(() => null);
        return { ...e, primitive_info: info === null ? null : { name: info.name, type: info.type, group: info.group } };
      }),
    );
  }),
  /** The new endpoint with its `whsec_…` secret: in this answer only. */
  create: workspaceProcedure("webhooks.create")
    .input(webhookInput)
    .mutation(({ ctx, input }) => {
      requirePro(ctx.plan);
      const { workspace: _, description, ...body } = input;
      return ctx.cell.createWebhook(ctx.principal, {
        ...body,
        ...(description === undefined || description === "" ? {} : { description }),
      });
    }),
  delete: workspaceProcedure("webhooks.delete")
    .input(z.object({ id }))
    .mutation(async ({ ctx, input }) => {
      requirePro(ctx.plan);
      await ctx.db.deleteWebhook(ctx.pool, input.workspace, input.id, ctx.actor);
      return { id: input.id };
    }),
  /** A disabled endpoint on again: its pending deliveries go out from now. */
  enable: workspaceProcedure("webhooks.enable")
    .input(z.object({ id }))
    .mutation(({ ctx, input }) => {
      requirePro(ctx.plan);
      return ctx.db.enableWebhook(ctx.pool, input.workspace, input.id, ctx.actor);
    }),
  /** An endpoint's deliveries, newest first, a page at a time (`cursor`: the last id of the page before). */
  deliveries: workspaceProcedure("webhooks.deliveries")
    .input(z.object({ id, cursor: id.optional() }))
    .query(async ({ ctx, input }) => {
      requirePro(ctx.plan);
      const data = await ctx.db.listDeliveries(ctx.pool, input.workspace, input.id, {
        limit: DELIVERY_PAGE,
        before: input.cursor,
      });
      return { data, next_cursor: data.length === DELIVERY_PAGE ? (data.at(-1)?.id ?? null) : null };
    }),
  /** Sends a delivery again: a new row at the end of the log, the same `webhook-id` and body. */
  redeliver: workspaceProcedure("webhooks.redeliver")
    .input(z.object({ id, delivery: id }))
    .mutation(async ({ ctx, input }) => {
      requirePro(ctx.plan);
      await ctx.db.redeliver(ctx.pool, input.workspace, input.id, input.delivery, ctx.actor, Date.now());
      return { queued: true };
    }),
});
