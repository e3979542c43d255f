import { TRPCError } from "@trpc/server";
import { inWorkspace, router } from "./init";
import { PERMISSIONS } from "./permissions";

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
  summary: inWorkspace(PERMISSIONS["billing.summary"]).query(async ({ ctx, input }) => {
    const month = new Date().toISOString().slice(0, 7);
    const live = await ctx.operations(input.workspace, month.replace("-", ""));
    const usage = await ctx.db.readUsage(ctx.pool, input.workspace, { month, liveOperations: live });
    const { rows } = await ctx.pool.query<{
      status: string;
      cancel_at_period_end: boolean;
      current_period_end: Date | null;
      grace_until: Date | null;
      customer: string | null;
    }>(
      `SELECT s.status, s.cancel_at_period_end, s.current_period_end, s.grace_until, c.stripe_customer_id AS customer
         FROM workspaces w LEFT JOIN subscriptions s ON s.workspace_id = w.id
         LEFT JOIN billing_customers c ON c.workspace_id = w.id WHERE w.id = $1`,
      [input.workspace],
    );
    const sub = rows[0];
    const billing = ctx.billing;
    const storageBytes = usage.storage_bytes;
    const invoices =
      billing !== null && sub?.customer != null ? await billing.lib.invoicesOf(billing.stripe, sub.customer) : [];
    return {
      workspace: usage.workspace,
      enabled: billing !== null,
      subscription:
        sub === undefined || sub.status === null
          ? null
          : {
              status: sub.status,
              cancel_at_period_end: sub.cancel_at_period_end,
              current_period_end: sub.current_period_end?.toISOString() ?? null,
              grace_until: sub.grace_until?.toISOString() ?? null,
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
  checkout: inWorkspace(PERMISSIONS["billing.checkout"]).mutation(async ({ ctx, input }) => {
    const billing = configured(ctx.billing);
    const { rows } = await ctx.pool.query<{ name: string; plan: string }>(
      "SELECT name, plan FROM workspaces WHERE id = $1",
      [input.workspace],
    );
    const ws = rows[0] as { name: string; plan: string };
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
  portal: inWorkspace(PERMISSIONS["billing.portal"]).mutation(async ({ ctx, input }) => {
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
