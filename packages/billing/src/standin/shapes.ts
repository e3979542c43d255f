// Every object the stand-in answers or sends is built here (subscriptions and invoices in
// subscription-shapes.ts), typed as the `stripe` SDK's own type for it: a field the real API
// object has and the stand-in leaves out is a compile error (`npm run typecheck`), not a
// surprise in production. Each builder takes what the request decides and fills the rest as
// Stripe does for a test-mode account with no tax, discounts, trials or saved payment methods
// (null where Stripe sends null). No casts: a cast would silence the very check.
import { randomBytes } from "node:crypto";
import Stripe from "stripe";

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/** The API version the stand-in's events are stamped with (stripe-node 23's). */
export const API_VERSION = "2026-10-28.endive";

export const decimal = (value: string | number): Stripe.Decimal => Stripe.Decimal.from(value);

/** Stripe's list envelope. */
export const listOf = <T>(data: T[], url: string, has_more = false): Stripe.ApiList<T> => ({
  object: "list",
  data,
  has_more,
  url,
});

/** The body of an error answer; `doc_url` as Stripe links its error codes. */
export function errorBody(
  type: Stripe.RawErrorType,
  message: string,
  param?: string,
  code?: string,
): { error: Stripe.StripeRawError } {
  return {
    error: {
      type,
      message,
      ...(code === undefined
        ? {}
        : { code, doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, "-")}` }),
      ...(param === undefined ? {} : { param }),
    },
  };
}

/** A customer as the stand-in keeps it: its invoices are numbered `<prefix>-<sequence>`, as Stripe's. */
export type StandInCustomer = Stripe.Customer & { invoice_prefix: string; next_invoice_sequence: number };

export function customerObject(f: Pick<Stripe.Customer, "created" | "name" | "email" | "metadata">): StandInCustomer {
  return {
    id: newId("cus"),
    object: "customer",
    address: null,
    balance: 0,
    currency: null,
    customer_account: null,
    default_source: null,
    delinquent: false,
    description: null,
    discount: null,
    invoice_prefix: randomBytes(4).toString("hex").toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: "none",
    test_clock: null,
    ...f,
  };
}

export function productObject(f: Pick<Stripe.Product, "name" | "active" | "metadata" | "created">): Stripe.Product {
  return {
    id: newId("prod"),
    object: "product",
    default_price: null,
    description: null,
    images: [],
    livemode: false,
    marketing_features: [],
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    tax_details: null,
    type: "service",
    unit_label: null,
    updated: f.created,
    url: null,
    ...f,
  };
}

export function priceObject(
  f: Pick<Stripe.Price, "currency" | "unit_amount" | "lookup_key" | "nickname" | "metadata" | "created"> & {
    product: string;
    unit_amount_decimal: string;
    recurring: Pick<Stripe.Price.Recurring, "interval" | "usage_type" | "meter"> | null;
  },
): Stripe.Price & { product: string } {
  return {
    id: newId("price"),
    object: "price",
    active: true,
    billing_scheme: "per_unit",
    custom_unit_amount: null,
    livemode: false,
    tax_behavior: "unspecified",
    tiers_mode: null,
    transform_quantity: null,
    type: f.recurring === null ? "one_time" : "recurring",
    ...f,
    unit_amount_decimal: decimal(f.unit_amount_decimal),
    recurring: f.recurring === null ? null : { interval_count: 1, trial_period_days: null, ...f.recurring },
  };
}

/** The legacy plan view of a recurring price, which subscription items still carry. */
export function planOf(price: Stripe.Price, recurring: Stripe.Price.Recurring): Stripe.Plan {
  return {
    id: price.id,
    object: "plan",
    active: price.active,
    amount: price.unit_amount,
    amount_decimal: price.unit_amount_decimal,
    billing_scheme: price.billing_scheme,
    created: price.created,
    currency: price.currency,
    interval: recurring.interval,
    interval_count: recurring.interval_count,
    livemode: false,
    metadata: price.metadata,
    meter: recurring.meter,
    nickname: price.nickname,
    product: price.product,
    tiers_mode: null,
    transform_usage: null,
    trial_period_days: null,
    usage_type: recurring.usage_type,
  };
}

export function meterObject(
  f: Pick<
    Stripe.Billing.Meter,
    "display_name" | "event_name" | "default_aggregation" | "customer_mapping" | "value_settings" | "created"
  >,
): Stripe.Billing.Meter {
  return {
    id: newId("mtr"),
    object: "billing.meter",
    event_time_window: null,
    livemode: false,
    status: "active",
    status_transitions: { deactivated_at: null },
    updated: f.created,
    ...f,
  };
}

export function meterEventObject(
  f: Pick<Stripe.Billing.MeterEvent, "created" | "event_name" | "identifier" | "payload" | "timestamp">,
): Stripe.Billing.MeterEvent {
  return { object: "billing.meter_event", livemode: false, ...f };
}

/** A subscription-mode Checkout Session, open (completing it fills the rest: `completeCheckout`). */
export function checkoutSessionObject(
  f: Pick<
    Stripe.Checkout.Session,
    "customer" | "client_reference_id" | "metadata" | "success_url" | "cancel_url" | "created" | "currency"
  > & { amount: number; baseUrl: string },
): Stripe.Checkout.Session {
  const { amount, baseUrl, ...fields } = f;
  const id = newId("cs_test");
  return {
    id,
    object: "checkout.session",
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: null,
    allowed_payment_method_types: null,
    amount_subtotal: amount,
    amount_total: amount,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    client_secret: null,
    collected_information: null,
    consent: null,
    consent_collection: null,
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer_account: null,
    customer_creation: null,
    customer_details: null,
    customer_email: null,
    discounts: [],
    expires_at: f.created + 86_400,
    integration_identifier: null,
    invoice: null,
    invoice_creation: null,
    livemode: false,
    locale: null,
    managed_payments: null,
    mode: "subscription",
    origin_context: null,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: "always",
    payment_method_configuration_details: null,
    payment_method_options: null,
    payment_method_types: ["card"],
    payment_status: "unpaid",
    permissions: null,
    recovered_from: null,
    saved_payment_method_options: {
      allow_redisplay_filters: ["always"],
      payment_method_remove: null,
      payment_method_save: null,
    },
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: "open",
    submit_type: null,
    subscription: null,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: "hosted_page",
    url: `${baseUrl}/checkout/${id}`,
    wallet_options: null,
    ...fields,
  };
}

/** What a completed session says of the customer who paid. */
export const customerDetails = (c: Stripe.Customer): Stripe.Checkout.Session.CustomerDetails => ({
  address: null,
  business_name: null,
  email: c.email,
  individual_name: null,
  name: c.name ?? null,
  phone: null,
  tax_exempt: "none",
  tax_ids: [],
});

export function portalSessionObject(
  f: Pick<Stripe.BillingPortal.Session, "customer" | "return_url" | "configuration" | "created"> & { baseUrl: string },
): Stripe.BillingPortal.Session {
  const { baseUrl, ...fields } = f;
  const id = newId("bps");
  return {
    id,
    object: "billing_portal.session",
    customer_account: null,
    flow: null,
    livemode: false,
    locale: null,
    on_behalf_of: null,
    url: `${baseUrl}/portal/${id}`,
    ...fields,
  };
}

/** The events the stand-in sends, each with the object Stripe sends in it. */
type Sent = Extract<
  Stripe.Event,
  {
    type:
      | "checkout.session.completed"
      | "customer.subscription.created"
      | "customer.subscription.updated"
      | "customer.subscription.deleted"
      | "invoice.paid"
      | "invoice.payment_failed";
  }
>;
export type EventInput = Sent extends infer E ? (E extends Sent ? Pick<E, "type" | "data"> : never) : never;

export function eventObject(input: EventInput, created: number): Stripe.Event {
  return {
    id: newId("evt"),
    object: "event",
    api_version: API_VERSION,
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    ...input,
  };
}

/** The id of an expandable field (the stand-in never expands: always the id). */
export const idOf = (v: string | { id: string }) => (typeof v === "string" ? v : v.id);
