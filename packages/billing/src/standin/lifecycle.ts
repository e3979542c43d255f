import type { ApiContext } from "./api.js";
import { invalid, type Obj, plusMonth } from "./resources.js";

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
