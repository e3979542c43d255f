// The subscription side of the stand-in's objects (shapes.ts has the rest): subscriptions,
// their items, invoices and their lines, each typed as the `stripe` SDK's own type for it.
import type Stripe from "stripe";
import { decimal, idOf, newId } from "./shapes.js";

export function subscriptionItemObject(
  f: Pick<Stripe.SubscriptionItem, "price" | "plan" | "subscription" | "created"> & {
    quantity: number | undefined;
    period: { start: number; end: number };
  },
): Stripe.SubscriptionItem {
  const { quantity, period, ...fields } = f;
  return {
    id: newId("si"),
    object: "subscription_item",
    billing_thresholds: null,
    current_period_start: period.start,
    current_period_end: period.end,
    current_trial: null,
    discounts: [],
    metadata: {},
    tax_rates: [],
    ...(quantity === undefined ? {} : { quantity }),
    ...fields,
  };
}

/** A subscription as the stand-in keeps it: its customer's id (never expanded). */
export type StandInSubscription = Stripe.Subscription & { customer: string };

export function subscriptionObject(
  f: Pick<Stripe.Subscription, "id" | "currency" | "metadata" | "created" | "items"> & { customer: string },
): StandInSubscription {
  return {
    object: "subscription",
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: f.created,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: { proration_discounts: "included" }, type: "flexible", updated_at: f.created },
    billing_schedules: [],
    billing_thresholds: null,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, feedback_option: null, reason: null },
    collection_method: "charge_automatically",
    customer_account: null,
    days_until_due: null,
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    ended_at: null,
    invoice_settings: {
      account_tax_ids: null,
      custom_fields: null,
      description: null,
      footer: null,
      issuer: { type: "self" },
    },
    latest_invoice: null,
    livemode: false,
    managed_payments: null,
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: "off" },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: f.created,
    status: "active",
    test_clock: null,
    transfer_data: null,
    trial_end: null,
    trial_settings: { end_behavior: { billing_cycle_anchor: null, missing_payment_method: "create_invoice" } },
    trial_start: null,
    ...f,
  };
}

/** One line of a subscription invoice: an item's price × quantity for the period. */
export function invoiceLineObject(
  f: Pick<Stripe.InvoiceLineItem, "amount" | "currency" | "description" | "invoice" | "quantity"> & {
    item: Stripe.SubscriptionItem;
    period: { start: number; end: number };
  },
): Stripe.InvoiceLineItem {
  const { item, period, ...fields } = f;
  return {
    id: newId("il"),
    object: "line_item",
    discount_amounts: [],
    discountable: true,
    discounts: [],
    livemode: false,
    metadata: {},
    parent: {
      type: "subscription_item_details",
      invoice_item_details: null,
      subscription_item_details: {
        invoice_item: null,
        proration: false,
        proration_details: { credited_items: null },
        subscription: item.subscription,
        subscription_item: item.id,
      },
    },
    period,
    pretax_credit_amounts: [],
    pricing: {
      type: "price_details",
      price_details: { price: item.price.id, product: idOf(item.price.product) },
      unit_amount_decimal: item.price.unit_amount_decimal,
    },
    quantity_decimal: f.quantity === null ? null : decimal(f.quantity),
    subscription: item.subscription,
    subtotal: f.amount,
    taxes: [],
    ...fields,
  };
}

/** A finalized subscription invoice (paid, or open after a failed attempt). */
export function invoiceObject(
  f: Pick<
    Stripe.Invoice,
    "id" | "customer" | "customer_email" | "customer_name" | "number" | "currency" | "created" | "lines"
  > &
    Pick<Stripe.Invoice, "period_start" | "period_end" | "billing_reason" | "hosted_invoice_url"> & {
      status: "paid" | "open";
      subscription: Stripe.Subscription;
    },
): Stripe.Invoice {
  const { subscription, ...fields } = f;
  const total = f.lines.data.reduce((sum, l) => sum + l.amount, 0);
  const paid = f.status === "paid";
  return {
    object: "invoice",
    account_country: "US",
    account_name: "Stripe stand-in",
    account_tax_ids: null,
    amount_due: total,
    amount_overpaid: 0,
    amount_paid: paid ? total : 0,
    amount_remaining: paid ? 0 : total,
    amount_shipping: 0,
    application: null,
    attempt_count: 1,
    attempted: true,
    auto_advance: !paid,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: null,
    collection_method: "charge_automatically",
    custom_fields: null,
    customer_account: null,
    customer_address: null,
    customer_phone: null,
    customer_shipping: null,
    customer_tax_exempt: "none",
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    due_date: null,
    effective_at: f.created,
    ending_balance: 0,
    footer: null,
    from_invoice: null,
    issuer: { type: "self" },
    last_finalization_error: null,
    latest_revision: null,
    livemode: false,
    metadata: {},
    next_payment_attempt: paid ? null : f.created + 3 * 86_400,
    on_behalf_of: null,
    parent: {
      type: "subscription_details",
      quote_details: null,
      subscription_details: { subscription: subscription.id, metadata: subscription.metadata },
    },
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status_transitions: {
      finalized_at: f.created,
      marked_uncollectible_at: null,
      paid_at: paid ? f.created : null,
      voided_at: null,
    },
    subtotal: total,
    subtotal_excluding_tax: total,
    test_clock: null,
    total,
    total_discount_amounts: [],
    total_excluding_tax: total,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: f.created,
    ...fields,
  };
}
