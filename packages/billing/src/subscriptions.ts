import { lockSubscription, type RecordAudit, saveSubscription, setBillingPlan, workspaceOfCustomer } from "@prim/db";
import type pg from "pg";
import type Stripe from "stripe";
import { ENDED_STATUSES, PRO_STATUSES } from "./plans.js";

const customerId = (c: string | { id: string } | null) => (c === null || typeof c === "string" ? c : c.id);

/** The latest end of the subscription's item periods (the period lives on items in this API version). */
function periodEnd(sub: Stripe.Subscription): Date | null {
  const ends = sub.items.data.map((i) => i.current_period_end).filter((n): n is number => typeof n === "number");
  return ends.length === 0 ? null : new Date(Math.max(...ends) * 1000);
}

/**
 * Records a subscription as Stripe reports it and sets the workspace's plan from its status:
 * active, trialing and past_due (the grace state) are Pro; canceled, unpaid and
 * incomplete_expired return it to Starter, as does past_due once its grace period is over;
 * other statuses (incomplete) change nothing. An
 * Enterprise workspace's plan is an operator's (`prim admin plan set`) and is never changed
 * here. A subscription that is not the workspace's current one (an older, replaced one) is
 * ignored. A plan change is recorded (`plan.change`, actor `stripe`) through `record`, in the
 * webhook's transaction. Returns the workspace whose plan changed, if any.
 */
export async function applySubscription(
  db: pg.ClientBase,
  record: RecordAudit,
  sub: Stripe.Subscription,
  workspaceHint: string | null,
): Promise<{ workspace: string | null; planChanged: boolean }> {
  const workspace =
    workspaceHint ?? sub.metadata?.workspace ?? (await workspaceOfCustomer(db, customerId(sub.customer)));
  if (workspace === null || workspace === undefined) return { workspace: null, planChanged: false };
  const row = await lockSubscription(db, workspace);
  if (row !== null && row.stripe_subscription_id !== sub.id && PRO_STATUSES.has(row.status)) {
    if (!PRO_STATUSES.has(sub.status)) return { workspace, planChanged: false }; // an old one ending
  }
  const { graceOver } = await saveSubscription(db, {
    workspace,
    id: sub.id,
    status: sub.status,
    cancelAtPeriodEnd: sub.cancel_at_period_end,
    currentPeriodEnd: periodEnd(sub),
  });
  const plan =
    PRO_STATUSES.has(sub.status) && !graceOver ? "pro" : ENDED_STATUSES.has(sub.status) || graceOver ? "starter" : null;
  if (plan === null) return { workspace, planChanged: false };
  const planChanged = await setBillingPlan(db, record, {
    workspace,
    plan,
    actor: "stripe",
    reason: `subscription ${sub.status}`,
  });
  return { workspace, planChanged };
}

/**
 * A deleted workspace's subscription ends at once (not at the period's end: there is nothing
 * left to serve): no further invoice, no proration credit. Already ended at Stripe (a webhook
 * not yet applied): nothing to do. Answers the status Stripe reports after.
 */
export async function cancelForDeletion(stripe: Stripe, subscription: string): Promise<string> {
  const sub = await stripe.subscriptions.retrieve(subscription);
  if (ENDED_STATUSES.has(sub.status)) return sub.status;
  const canceled = await stripe.subscriptions.cancel(subscription, { invoice_now: false, prorate: false });
  return canceled.status;
}
