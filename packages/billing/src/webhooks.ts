import {
  auditedTransaction,
  endGrace,
  recordBillingEvent,
  startGrace,
  tagBillingEvent,
  workspaceOfCustomer,
} from "@prim/db";
import { ServiceError } from "@prim/wire";
import type pg from "pg";
import type Stripe from "stripe";
import { GRACE_DAYS } from "./plans.js";
import { applySubscription } from "./subscriptions.js";

export interface WebhookDeps {
  pool: pg.Pool;
  stripe: Stripe;
  webhookSecret: string;
  /** Tells every process a workspace's plan changed (drops the cached plan). */
  onPlanChanged(workspace: string): Promise<void>;
  now?: () => Date;
}

/** How old a signature may be (Stripe's own default tolerance). */
export const SIGNATURE_TOLERANCE_S = 300;

/**
 * `POST /v1/billing/webhook`: verifies the signature on the raw body (a bad or missing one, or
 * one older than 5 minutes: 400 `invalid_request`), then applies the event once — the event id
 * is recorded in the same transaction as its effect, so a replayed id is refused with 400 and
 * changes nothing. Subscription state is read back from Stripe (`subscriptions.retrieve`), so
 * events arriving out of order still leave the latest state; a plan it changes is audited
 * (`plan.change`, actor `stripe`) in the same transaction. Unhandled types are recorded and
 * acknowledged.
 */
export async function handleWebhook(
  deps: WebhookDeps,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<{ id: string; type: string; workspace: string | null }> {
  let event: Stripe.Event;
  try {
    if (signature === undefined) throw new Error("no Stripe-Signature header");
    event = deps.stripe.webhooks.constructEvent(rawBody, signature, deps.webhookSecret, SIGNATURE_TOLERANCE_S);
  } catch (err) {
    throw new ServiceError("invalid_request", `webhook signature refused: ${(err as Error).message}`);
  }
  const subscription = await subscriptionOf(deps.stripe, event);
  const now = deps.now?.() ?? new Date();
  const changed: string[] = [];
  const workspace = await auditedTransaction(deps.pool, async (db, record) => {
    if (!(await recordBillingEvent(db, event.id, event.type))) {
      throw new ServiceError("invalid_request", `event ${event.id} was already processed`);
    }
    const object = event.data.object as { customer?: string | { id: string } | null; client_reference_id?: string };
    const customer = typeof object.customer === "string" ? object.customer : (object.customer?.id ?? null);
    let ws = event.type === "checkout.session.completed" ? (object.client_reference_id ?? null) : null;
    ws ??= await workspaceOfCustomer(db, customer);
    if (ws === null) return null;
    if (subscription !== null) {
      const applied = await applySubscription(db, record, subscription, ws);
      if (applied.planChanged) changed.push(ws);
    }
    if (event.type === "invoice.payment_failed") await startGrace(db, ws, now, GRACE_DAYS);
    if (event.type === "invoice.paid") await endGrace(db, ws);
    await tagBillingEvent(db, event.id, ws);
    return ws;
  });
  await tellPlanChanged(deps.onPlanChanged, changed);
  return { id: event.id, type: event.type, workspace };
}

/** The subscription an event is about, as Stripe has it now (null for other events). */
async function subscriptionOf(stripe: Stripe, event: Stripe.Event): Promise<Stripe.Subscription | null> {
  let id: string | null = null;
  const object = event.data.object as unknown as Record<string, unknown>;
  if (event.type.startsWith("customer.subscription.")) id = object.id as string;
  else if (event.type === "checkout.session.completed") id = refId(object.subscription);
  else if (event.type === "invoice.paid" || event.type === "invoice.payment_failed") {
    const parent = object.parent as { subscription_details?: { subscription?: unknown } | null } | null;
    id = refId(parent?.subscription_details?.subscription ?? null);
  }
  return id === null ? null : await stripe.subscriptions.retrieve(id);
}

const refId = (v: unknown): string | null =>
  typeof v === "string" ? v : typeof v === "object" && v !== null && "id" in v ? String(v.id) : null;

/**
 * Drops the changed workspaces' cached plans. The change is committed already: if Redis does
 * not answer, the cached plan still expires within its TTL (1 h), so this never fails the
 * caller (a failed webhook would be retried by Stripe and refused as a replay).
 */
export async function tellPlanChanged(
  onPlanChanged: (workspace: string) => Promise<void>,
  workspaces: readonly string[],
): Promise<void> {
  for (const ws of workspaces) {
    try {
      await onPlanChanged(ws);
    } catch (err) {
      console.warn(
        `billing: the cached plan of ${ws} was not dropped (${(err as Error).message}); it expires within 1 h`,
      );
    }
  }
}
