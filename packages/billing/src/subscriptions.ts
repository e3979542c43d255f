import type pg from "pg";
import type Stripe from "stripe";
import { ENDED_STATUSES, GRACE_DAYS, PRO_STATUSES } from "./plans.js";

type Queryable = Pick<pg.PoolClient, "query">;

/** The workspace a Stripe object belongs to: its metadata, else its customer's record. */
export async function workspaceOfCustomer(db: Queryable, customer: string | null): Promise<string | null> {
  if (customer === null) return null;
  const { rows } = await db.query<{ workspace_id: string }>(
    "SELECT workspace_id FROM billing_customers WHERE stripe_customer_id = $1",
    [customer],
  );
  return rows[0]?.workspace_id ?? null;
}

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
 * ignored. Returns the workspace whose plan changed, if any.
 */
export async function applySubscription(
  db: Queryable,
  sub: Stripe.Subscription,
  workspaceHint: string | null,
): Promise<{ workspace: string | null; planChanged: boolean }> {
  const workspace =
    workspaceHint ?? sub.metadata?.workspace ?? (await workspaceOfCustomer(db, customerId(sub.customer)));
  if (workspace === null || workspace === undefined) return { workspace: null, planChanged: false };
  const current = await db.query<{ stripe_subscription_id: string; status: string }>(
    "SELECT stripe_subscription_id, status FROM subscriptions WHERE workspace_id = $1 FOR UPDATE",
    [workspace],
  );
  const row = current.rows[0];
  if (row !== undefined && row.stripe_subscription_id !== sub.id && PRO_STATUSES.has(row.status)) {
    if (!PRO_STATUSES.has(sub.status)) return { workspace, planChanged: false }; // an old one ending
  }
  await db.query(
    `INSERT INTO subscriptions (workspace_id, stripe_subscription_id, status, cancel_at_period_end, current_period_end)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (workspace_id) DO UPDATE SET
       stripe_subscription_id = EXCLUDED.stripe_subscription_id, status = EXCLUDED.status,
       cancel_at_period_end = EXCLUDED.cancel_at_period_end, current_period_end = EXCLUDED.current_period_end,
       grace_until = CASE WHEN EXCLUDED.status = 'past_due' THEN subscriptions.grace_until END,
       updated_at = now()`,
    [workspace, sub.id, sub.status, sub.cancel_at_period_end, periodEnd(sub)],
  );
  const grace = await db.query<{ expired: boolean }>(
    "SELECT grace_until IS NOT NULL AND grace_until <= now() AS expired FROM subscriptions WHERE workspace_id = $1",
    [workspace],
  );
  const graceOver = grace.rows[0]?.expired === true;
  const plan =
    PRO_STATUSES.has(sub.status) && !graceOver ? "pro" : ENDED_STATUSES.has(sub.status) || graceOver ? "starter" : null;
  if (plan === null) return { workspace, planChanged: false };
  return { workspace, planChanged: await setPlan(db, workspace, plan) };
}

/** Sets a non-Enterprise workspace's plan; true when it changed. */
export async function setPlan(db: Queryable, workspace: string, plan: "pro" | "starter"): Promise<boolean> {
  const { rowCount } = await db.query(
    "UPDATE workspaces SET plan = $2 WHERE id = $1 AND plan <> $2 AND plan <> 'enterprise'",
    [workspace, plan],
  );
  return (rowCount ?? 0) > 0;
}

/** A failed payment: the grace period starts (once; a later failure does not extend it). */
export async function startGrace(db: Queryable, workspace: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE subscriptions SET grace_until = COALESCE(grace_until, $2::timestamptz + make_interval(days => $3)),
       updated_at = now() WHERE workspace_id = $1`,
    [workspace, now, GRACE_DAYS],
  );
}

/** A paid invoice ends the grace period. */
export async function endGrace(db: Queryable, workspace: string): Promise<void> {
  await db.query("UPDATE subscriptions SET grace_until = NULL, updated_at = now() WHERE workspace_id = $1", [
    workspace,
  ]);
}

/**
 * Workspaces whose grace period ran out while still unpaid go back to Starter (the billing
 * job runs this). Returns them, for their cached plans to be dropped.
 */
export async function expireGrace(db: Queryable, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE workspaces w SET plan = 'starter' FROM subscriptions s
      WHERE s.workspace_id = w.id AND s.grace_until IS NOT NULL AND s.grace_until <= $1
        AND w.plan = 'pro'
      RETURNING w.id`,
    [now],
  );
  return rows.map((r) => r.id);
}
