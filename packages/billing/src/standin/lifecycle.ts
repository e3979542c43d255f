import type Stripe from "stripe";
import { type ApiContext, bool, invalid, metadata, type Params, plusMonth } from "./resources.js";
import { customerDetails, listOf, newId, planOf } from "./shapes.js";
import { type StandInSubscription as Sub, subscriptionItemObject, subscriptionObject } from "./subscription-shapes.js";

/** The current period (the period lives on the items in this API version; they share it here). */
function periodOf(sub: Sub): { start: number; end: number } {
  const item = sub.items.data[0];
  if (item === undefined) throw invalid("subscription", "has no items");
  return { start: item.current_period_start, end: item.current_period_end };
}

/** A renewal payment fails: past_due, an open invoice; `invoice.payment_failed` then the subscription. */
export async function failPayment(ctx: ApiContext, id: string): Promise<void> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "canceled");
  const invoice = ctx.store.makeInvoice(sub, "open", periodOf(sub), "subscription_cycle", ctx.baseUrl);
  sub.status = "past_due";
  await ctx.emit({ type: "invoice.payment_failed", data: { object: invoice } });
  await ctx.emit({ type: "customer.subscription.updated", data: { object: sub } });
}

/** The open invoice is paid: active again; `invoice.paid` then the subscription. */
export async function payInvoice(ctx: ApiContext, id: string): Promise<void> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  const open = [...ctx.store.invoices.values()]
    .filter((i) => i.parent?.subscription_details?.subscription === id && i.status === "open")
    .pop();
  if (open === undefined) throw invalid("subscription", "no open invoice");
  open.status = "paid";
  open.amount_paid = open.amount_due;
  open.amount_remaining = 0;
  open.attempt_count += 1;
  open.auto_advance = false;
  open.next_payment_attempt = null;
  open.status_transitions.paid_at = ctx.store.now();
  sub.status = "active";
  await ctx.emit({ type: "invoice.paid", data: { object: open } });
  await ctx.emit({ type: "customer.subscription.updated", data: { object: sub } });
}

/**
 * The period ends: a subscription set to cancel then is canceled (`customer.subscription.deleted`);
 * any other renews — a paid invoice for the period just ended (licensed items and the metered
 * usage of its meter events), `invoice.paid`, then the subscription with its new period.
 */
export async function endPeriod(ctx: ApiContext, id: string): Promise<void> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "canceled");
  const period = periodOf(sub);
  if (sub.cancel_at_period_end) {
    end(sub, period.end);
    await ctx.emit({ type: "customer.subscription.deleted", data: { object: sub } });
    return;
  }
  const invoice = ctx.store.makeInvoice(sub, "paid", period, "subscription_cycle", ctx.baseUrl);
  for (const item of sub.items.data) {
    item.current_period_start = period.end;
    item.current_period_end = plusMonth(period.end);
  }
  await ctx.emit({ type: "invoice.paid", data: { object: invoice } });
  await ctx.emit({ type: "customer.subscription.updated", data: { object: sub } });
}

/** Completing a session (the hosted page's button): subscription, paid invoice, three events. */
export async function completeCheckout(ctx: ApiContext, id: string): Promise<Sub> {
  const record = ctx.store.get(ctx.store.sessions, "checkout.session", id);
  const session = record.session;
  if (session.status !== "open") throw invalid("session", "this Checkout Session is not open");
  const customer = ctx.store.customer(record.customer);
  const now = ctx.store.now();
  const period = { start: now, end: plusMonth(now) };
  const subId = newId("sub");
  const sub: Sub = subscriptionObject({
    id: subId,
    customer: customer.id,
    currency: session.currency ?? "usd",
    metadata: record.subscriptionMetadata,
    created: now,
    items: listOf(
      record.items.map((li) => {
        const price = ctx.store.get(ctx.store.prices, "price", li.price);
        if (price.recurring === null) throw invalid("price", "not recurring"); // checkout takes none such
        return subscriptionItemObject({
          price,
          plan: planOf(price, price.recurring),
          quantity: li.quantity,
          subscription: subId,
          created: now,
          period,
        });
      }),
      `/v1/subscription_items?subscription=${subId}`,
    ),
  });
  ctx.store.subscriptions.set(subId, sub);
  const invoice = ctx.store.makeInvoice(sub, "paid", period, "subscription_create", ctx.baseUrl);
  session.status = "complete";
  session.payment_status = "paid";
  session.subscription = subId;
  session.invoice = invoice.id;
  session.customer_details = customerDetails(customer);
  await ctx.emit({ type: "checkout.session.completed", data: { object: session } });
  await ctx.emit({ type: "customer.subscription.created", data: { object: sub } });
  await ctx.emit({ type: "invoice.paid", data: { object: invoice } });
  return sub;
}

export async function updateSubscription(ctx: ApiContext, params: Params, id: string): Promise<Stripe.Subscription> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "A canceled subscription can only update its metadata");
  const cancel = bool(params.cancel_at_period_end);
  if (cancel !== undefined) setCancelAtPeriodEnd(sub, cancel, ctx.store.now());
  if (params.metadata !== undefined) sub.metadata = { ...sub.metadata, ...metadata(params) };
  await ctx.emit({ type: "customer.subscription.updated", data: { object: sub } });
  return sub;
}

/** Set (or unset) to cancel at the period's end: Stripe shows when it was asked, when it ends, and why. */
export function setCancelAtPeriodEnd(sub: Sub, cancel: boolean, now: number): void {
  sub.cancel_at_period_end = cancel;
  sub.cancel_at = cancel ? periodOf(sub).end : null;
  sub.canceled_at = cancel ? now : null;
  sub.cancellation_details = {
    comment: null,
    feedback: null,
    feedback_option: null,
    reason: cancel ? "cancellation_requested" : null,
  };
}

/** The subscription ends (at its period's end, or now when canceled at once). */
function end(sub: Sub, at: number): void {
  sub.status = "canceled";
  sub.canceled_at ??= at;
  sub.ended_at = at;
  sub.cancellation_details = {
    comment: null,
    feedback: null,
    feedback_option: null,
    reason: "cancellation_requested",
  };
}

export async function cancelSubscription(ctx: ApiContext, _params: Params, id: string): Promise<Stripe.Subscription> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "this subscription is already canceled");
  end(sub, ctx.store.now());
  await ctx.emit({ type: "customer.subscription.deleted", data: { object: sub } });
  return sub;
}
