import type pg from "pg";

/**
 * Billing's rows (CLOUD.md, "Billing (Stripe)"): a workspace's Stripe customer, its current
 * subscription as the webhooks reported it, and the webhook events applied (each once). Stripe
 * is the record for money; @prim/billing decides, these read and write. Plan changes are
 * `setBillingPlan` / `expireGrace` (plans.ts), audited.
 */

type Queryable = Pick<pg.ClientBase, "query">;

export async function customerOf(db: Queryable, workspace: string): Promise<string | null> {
  const { rows } = await db.query<{ stripe_customer_id: string }>(
    "SELECT stripe_customer_id FROM billing_customers WHERE workspace_id = $1",
    [workspace],
  );
  return rows[0]?.stripe_customer_id ?? null;
}

/** Keeps the first customer recorded for a workspace (two first actions at once: one row). */
export async function saveCustomer(db: Queryable, workspace: string, customer: string): Promise<void> {
  await db.query(
    "INSERT INTO billing_customers (workspace_id, stripe_customer_id) VALUES ($1, $2) ON CONFLICT (workspace_id) DO NOTHING",
    [workspace, customer],
  );
}

/** The workspace a Stripe customer belongs to, or null. */
export async function workspaceOfCustomer(db: Queryable, customer: string | null): Promise<string | null> {
  if (customer === null) return null;
  const { rows } = await db.query<{ workspace_id: string }>(
    "SELECT workspace_id FROM billing_customers WHERE stripe_customer_id = $1",
    [customer],
  );
  return rows[0]?.workspace_id ?? null;
}

export interface SubscriptionRow {
  stripe_subscription_id: string;
  status: string;
}

/** The workspace's recorded subscription, locked for the webhook's transaction. */
export async function lockSubscription(db: Queryable, workspace: string): Promise<SubscriptionRow | null> {
  const { rows } = await db.query<SubscriptionRow>(
    "SELECT stripe_subscription_id, status FROM subscriptions WHERE workspace_id = $1 FOR UPDATE",
    [workspace],
  );
  return rows[0] ?? null;
}

/**
 * Records a subscription as Stripe reports it (a grace period survives only while it stays
 * `past_due`); answers whether a grace period has run out.
 */
export async function saveSubscription(
  db: Queryable,
  input: {
    workspace: string;
    id: string;
    status: string;
    cancelAtPeriodEnd: boolean;
    currentPeriodEnd: Date | null;
  },
): Promise<{ graceOver: boolean }> {
  const { rows } = await db.query<{ expired: boolean }>(
    `INSERT INTO subscriptions (workspace_id, stripe_subscription_id, status, cancel_at_period_end, current_period_end)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (workspace_id) DO UPDATE SET
       stripe_subscription_id = EXCLUDED.stripe_subscription_id, status = EXCLUDED.status,
       cancel_at_period_end = EXCLUDED.cancel_at_period_end, current_period_end = EXCLUDED.current_period_end,
       grace_until = CASE WHEN EXCLUDED.status = 'past_due' THEN subscriptions.grace_until END,
       updated_at = now()
     RETURNING grace_until IS NOT NULL AND grace_until <= now() AS expired`,
    [input.workspace, input.id, input.status, input.cancelAtPeriodEnd, input.currentPeriodEnd],
  );
  return { graceOver: rows[0]?.expired === true };
}

/** A failed payment: the grace period starts (once; a later failure does not extend it). */
export async function startGrace(db: Queryable, workspace: string, now: Date, days: number): Promise<void> {
  await db.query(
    `UPDATE subscriptions SET grace_until = COALESCE(grace_until, $2::timestamptz + make_interval(days => $3)),
       updated_at = now() WHERE workspace_id = $1`,
    [workspace, now, days],
  );
}

/** A paid invoice ends the grace period. */
export async function endGrace(db: Queryable, workspace: string): Promise<void> {
  await db.query("UPDATE subscriptions SET grace_until = NULL, updated_at = now() WHERE workspace_id = $1", [
    workspace,
  ]);
}

/** Records a webhook event's id: false when it was applied before (a replay). */
export async function recordBillingEvent(db: Queryable, id: string, type: string): Promise<boolean> {
  const { rowCount } = await db.query("INSERT INTO billing_events (id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
    id,
    type,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Notes which workspace an applied event concerned. */
export async function tagBillingEvent(db: Queryable, id: string, workspace: string): Promise<void> {
  await db.query("UPDATE billing_events SET workspace_id = $2 WHERE id = $1", [id, workspace]);
}

export interface BillingState {
  subscription: {
    status: string;
    cancel_at_period_end: boolean;
    current_period_end: Date | null;
    grace_until: Date | null;
  } | null;
  customer: string | null;
}

/** The billing page's subscription (as the webhooks reported it) and the Stripe customer. */
export async function billingState(db: Queryable, workspace: string): Promise<BillingState> {
  const { rows } = await db.query<{
    status: string | null;
    cancel_at_period_end: boolean;
    current_period_end: Date | null;
    grace_until: Date | null;
    customer: string | null;
  }>(
    `SELECT s.status, s.cancel_at_period_end, s.current_period_end, s.grace_until, c.stripe_customer_id AS customer
       FROM workspaces w LEFT JOIN subscriptions s ON s.workspace_id = w.id
       LEFT JOIN billing_customers c ON c.workspace_id = w.id WHERE w.id = $1`,
    [workspace],
  );
  const row = rows[0];
  if (row === undefined) return { subscription: null, customer: null };
  const { customer, status, ...rest } = row;
  return { customer, subscription: status === null ? null : { status, ...rest } };
}

/**
 * Runs `fn` while holding the billing job's advisory lock (one process at a time is the
 * leader); null without running it when another process holds it.
 */
export async function withBillingLock<T>(pool: pg.Pool, lock: number, fn: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [lock]);
    if (rows[0]?.locked !== true) return null;
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [lock]);
    }
  } finally {
    client.release();
  }
}
