import {
  type ApiContext,
  bool,
  invalid,
  metadata,
  newId,
  type Obj,
  type Params,
  plusMonth,
  publicSession,
} from "./resources.js";

const periodOf = (sub: Obj) => {
  const item = (sub.items.data as Obj[])[0] as Obj;
  return { start: item.current_period_start as number, end: item.current_period_end as number };
};

/** A renewal payment fails: past_due, an open invoice; `invoice.payment_failed` then the subscription. */
export async function failPayment(ctx: ApiContext, id: string): Promise<void> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "canceled");
  const { start, end } = periodOf(sub);
  const invoice = ctx.store.makeInvoice(sub, "open", start, end, ctx.baseUrl);
  sub.status = "past_due";
  await ctx.emit("invoice.payment_failed", invoice);
  await ctx.emit("customer.subscription.updated", sub);
}

/** The open invoice is paid: active again; `invoice.paid` then the subscription. */
export async function payInvoice(ctx: ApiContext, id: string): Promise<void> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  const open = [...ctx.store.invoices.values()]
    .filter((i) => i.parent.subscription_details.subscription === id && i.status === "open")
    .pop();
  if (open === undefined) throw invalid("subscription", "no open invoice");
  Object.assign(open, { status: "paid", amount_paid: open.amount_due, amount_remaining: 0 });
  sub.status = "active";
  await ctx.emit("invoice.paid", open);
  await ctx.emit("customer.subscription.updated", sub);
}

/**
 * The period ends: a subscription set to cancel then is canceled (`customer.subscription.deleted`);
 * any other renews — a paid invoice for the period just ended (licensed items and the metered
 * usage of its meter events), `invoice.paid`, then the subscription with its new period.
 */
export async function endPeriod(ctx: ApiContext, id: string): Promise<void> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "canceled");
  const { start, end } = periodOf(sub);
  if (sub.cancel_at_period_end) {
    Object.assign(sub, { status: "canceled", canceled_at: end, ended_at: end });
    await ctx.emit("customer.subscription.deleted", sub);
    return;
  }
  const invoice = ctx.store.makeInvoice(sub, "paid", start, end, ctx.baseUrl);
  for (const item of sub.items.data as Obj[]) {
    item.current_period_start = end;
    item.current_period_end = plusMonth(end);
  }
  await ctx.emit("invoice.paid", invoice);
  await ctx.emit("customer.subscription.updated", sub);
}

/** Completing a session (the hosted page's button): subscription, paid invoice, three events. */
export async function completeCheckout(ctx: ApiContext, id: string): Promise<Obj> {
  const session = ctx.store.get(ctx.store.sessions, "checkout.session", id);
  if (session.status !== "open") throw invalid("session", "this Checkout Session is not open");
  const now = ctx.store.now();
  const end = plusMonth(now);
  const subId = newId("sub");
  const sub: Obj = {
    id: subId,
    object: "subscription",
    customer: session.customer,
    status: "active",
    cancel_at_period_end: false,
    canceled_at: null,
    ended_at: null,
    created: now,
    start_date: now,
    metadata: session.subscription_data_metadata,
    livemode: false,
    items: {
      object: "list",
      has_more: false,
      url: `/v1/subscription_items?subscription=${subId}`,
      data: session.line_items_internal.map((li) => ({
        id: newId("si"),
        object: "subscription_item",
        price: structuredClone(ctx.store.prices.get(li.price)),
        ...(li.quantity === undefined ? {} : { quantity: li.quantity }),
        current_period_start: now,
        current_period_end: end,
        subscription: subId,
      })),
    },
  };
  ctx.store.subscriptions.set(subId, sub);
  const invoice = ctx.store.makeInvoice(sub, "paid", now, end, ctx.baseUrl);
  Object.assign(session, { status: "complete", payment_status: "paid", subscription: subId });
  await ctx.emit("checkout.session.completed", publicSession(session));
  await ctx.emit("customer.subscription.created", sub);
  await ctx.emit("invoice.paid", invoice);
  return sub;
}

export async function updateSubscription(ctx: ApiContext, params: Params, id: string): Promise<Obj> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "A canceled subscription can only update its metadata");
  const cancel = bool(params.cancel_at_period_end);
  if (cancel !== undefined) sub.cancel_at_period_end = cancel;
  if (params.metadata !== undefined) sub.metadata = { ...sub.metadata, ...metadata(params) };
  await ctx.emit("customer.subscription.updated", sub);
  return sub;
}

export async function cancelSubscription(ctx: ApiContext, _params: Params, id: string): Promise<Obj> {
  const sub = ctx.store.get(ctx.store.subscriptions, "subscription", id);
  if (sub.status === "canceled") throw invalid("subscription", "this subscription is already canceled");
  Object.assign(sub, { status: "canceled", canceled_at: ctx.store.now(), ended_at: ctx.store.now() });
  await ctx.emit("customer.subscription.deleted", sub);
  return sub;
}
