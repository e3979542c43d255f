import { TRPCError } from "@trpc/server";
import { router, workspaceProcedure } from "../init";

function configured<T>(billing: T | null): T {
  if (billing === null) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: "billing is not configured on this server" });
  }
  return billing;
}

/**
 * The billing page (owners and billing admins; CLOUD.md, "Billing"): the plan and the
 * subscription as the webhooks reported it, this month's usage against Pro's included amounts
 * with the projected overage, invoices; upgrade through Stripe Checkout, manage through the
 * Customer Portal.
 */
export const billingRouter = router({
  summary: workspaceProcedure("billing.summary").query(async ({ ctx, input }) => {
    const month = ctx.db.usageMonth();
    const live = await ctx.operations(input.workspace, month);
    const usage = await ctx.db.readUsage(ctx.pool, input.workspace, { month, liveOperations: live });
    const { subscription, customer } = await ctx.db.billingState(ctx.pool, input.workspace);
    const billing = ctx.billing;
    const storageBytes = usage.storage_bytes;
    const invoices =
      billing !== null && customer !== null ? await billing.lib.invoicesOf(billing.stripe, customer) : [];
    return {
      workspace: usage.workspace,
      enabled: billing !== null,
      subscription:
        subscription === null
          ? null
          : {
              status: subscription.status,
              cancel_at_period_end: subscription.cancel_at_period_end,
              current_period_end: subscription.current_period_end?.toISOString() ?? null,
              grace_until: subscription.grace_until?.toISOString() ?? null,
            },
      usage: { operations: usage.operations, storage_bytes: storageBytes },
      included:
        billing === null
          ? null
          : { operations: billing.lib.PRO.includedOperations, storage_bytes: billing.lib.PRO.includedStorageBytes },
      projection:
        billing === null || usage.workspace.plan !== "pro"
          ? null
          : billing.lib.projectOverage({ operations: usage.operations, storageBytes, now: new Date() }),
      invoices,
    };
  }),
  /** A Checkout Session for Pro (Starter workspaces; Enterprise is set by an operator). */
  checkout: workspaceProcedure("billing.checkout").mutation(async ({ ctx, input }) => {
    const billing = configured(ctx.billing);
    // A member's workspace exists (workspaceProcedure found it).
    const ws = (await ctx.db.readWorkspace(ctx.pool, input.workspace)) as { name: string; plan: string };
    if (ws.plan !== "starter") {
      throw new TRPCError({
        code: "CONFLICT",
        message:
          ws.plan === "enterprise"
            ? "Enterprise plans are set by Prim, not through checkout"
            : "this workspace is already on Pro: manage it in the billing portal",
      });
    }
    const customer = await billing.lib.ensureCustomer(
      ctx.pool,
      billing.stripe,
      { id: input.workspace, name: ws.name },
      ctx.user.email,
    );
    const url = await billing.lib.checkoutSession(billing.stripe, {
      customer,
      workspace: input.workspace,
      billingPageUrl: `${ctx.dashboardUrl}/w/${input.workspace}/billing`,
      attempt: new Date().toISOString().slice(0, 16), // a double click within a minute: one session
    });
    return { url };
  }),
  /** A Customer Portal session (payment method, cancel, invoices). */
  portal: workspaceProcedure("billing.portal").mutation(async ({ ctx, input }) => {
    const billing = configured(ctx.billing);
    const customer = await billing.lib.customerOf(ctx.pool, input.workspace);
    if (customer === null) {
      throw new TRPCError({ code: "PRECONDITION_FAILED", message: "no billing account yet: upgrade first" });
    }
    return {
      url: await billing.lib.portalSession(
        billing.stripe,
        customer,
        `${ctx.dashboardUrl}/w/${input.workspace}/billing`,
      ),
    };
  }),
});
