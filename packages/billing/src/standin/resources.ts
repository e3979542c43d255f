import type Stripe from "stripe";
import { type EventInput, errorBody, listOf, newId, type StandInCustomer } from "./shapes.js";
import { invoiceLineObject, invoiceObject, type StandInSubscription } from "./subscription-shapes.js";

/** A Stripe-shaped error: `{ error: { type, code?, message, param? } }` with an HTTP status. */
export class StripeFault extends Error {
  constructor(
    readonly status: number,
    readonly type: Stripe.RawErrorType,
    message: string,
    readonly param?: string,
    readonly code?: string,
  ) {
    super(message);
  }
  toAnswer(): { status: number; body: string } {
    return { status: this.status, body: JSON.stringify(this.body()) };
  }
  body() {
    return errorBody(this.type, this.message, this.param, this.code);
  }
}

export type Params = Record<string, unknown>;

export const missing = (param: string) =>
  new StripeFault(400, "invalid_request_error", `Missing required param: ${param}.`, param, "parameter_missing");
export const invalid = (param: string, why: string) =>
  new StripeFault(400, "invalid_request_error", `Invalid ${param}: ${why}`, param, "parameter_invalid");
export const notFound = (kind: string, id: string, param = "id") =>
  new StripeFault(404, "invalid_request_error", `No such ${kind}: '${id}'`, param, "resource_missing");

/** A required non-empty string parameter. */
export function str(params: Params, name: string): string {
  const v = params[name];
  if (v === undefined || v === "") throw missing(name);
  if (typeof v !== "string") throw invalid(name, "must be a string");
  return v;
}

export const opt = (params: Params, name: string): string | undefined => {
  const v = params[name];
  return typeof v === "string" && v !== "" ? v : undefined;
};

export const bool = (v: unknown): boolean | undefined => (v === "true" ? true : v === "false" ? false : undefined);

export function metadata(params: Params): Record<string, string> {
  const m = params.metadata;
  return typeof m === "object" && m !== null ? (m as Record<string, string>) : {};
}

export function absoluteUrl(params: Params, name: string): string {
  const v = str(params, name);
  if (!/^https?:\/\//.test(v)) throw invalid(name, "Not a valid URL");
  return v;
}

/** Adds a month to a time in seconds (UTC calendar). */
export function plusMonth(seconds: number): number {
  const d = new Date(seconds * 1000);
  return Math.floor(
    Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
    ) / 1000,
  );
}

/** Stripe's list envelope, newest first, with `limit` (≤ 100) and `starting_after`. */
export function list<T extends { id: string }>(all: Iterable<T>, query: Params, url: string): Stripe.ApiList<T> {
  const limit = query.limit === undefined ? 10 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid("limit", "must be between 1 and 100");
  let items = [...all].reverse();
  const after = opt(query, "starting_after");
  if (after !== undefined) {
    const at = items.findIndex((o) => o.id === after);
    if (at < 0) throw notFound("object", after, "starting_after");
    items = items.slice(at + 1);
  }
  return listOf(items.slice(0, limit), url, items.length > limit);
}

/** Whether a list filter in the query (absent: any) matches a field's value. */
export const matches = (query: Params, name: string, value: unknown) =>
  query[name] === undefined || String(query[name]) === String(value);

/** A Checkout Session with what the stand-in keeps of its request to complete it later. */
export interface CheckoutRecord {
  session: Stripe.Checkout.Session;
  customer: string;
  items: { price: string; quantity?: number }[];
  subscriptionMetadata: Stripe.Metadata;
}

/** The store of every object the stand-in holds, by kind and id (insertion order kept). */
export class Store {
  readonly customers = new Map<string, StandInCustomer>();
  readonly products = new Map<string, Stripe.Product>();
  readonly prices = new Map<string, Stripe.Price & { product: string }>();
  readonly meters = new Map<string, Stripe.Billing.Meter>();
  readonly sessions = new Map<string, CheckoutRecord>();
  readonly portals = new Map<string, Stripe.BillingPortal.Session>();
  readonly subscriptions = new Map<string, StandInSubscription>();
  readonly invoices = new Map<string, Stripe.Invoice>();
  /** Each event as it was sent (its JSON), for redelivery. */
  readonly events = new Map<string, string>();
  readonly meterEvents: {
    event_name: string;
    identifier: string;
    customer: string;
    value: number;
    timestamp: number;
  }[] = [];
  readonly duplicates: string[] = [];
  /** The account's default Customer Portal configuration. */
  readonly portalConfiguration = newId("bpc");

  constructor(readonly now: () => number) {}

  get<T>(map: Map<string, T>, kind: string, id: string): T {
    const found = map.get(id);
    if (found === undefined) throw notFound(kind, id);
    return found;
  }

  customer(id: string, param = "customer"): StandInCustomer {
    const c = this.customers.get(id);
    if (c === undefined) throw notFound("customer", id, param);
    return c;
  }

  /**
   * An invoice for a subscription's period (numbered from the customer's prefix and sequence):
   * licensed items × quantity, metered items from the meter events of the period.
   */
  makeInvoice(
    sub: StandInSubscription,
    status: "paid" | "open",
    period: { start: number; end: number },
    billingReason: Stripe.Invoice.BillingReason,
    baseUrl: string,
  ): Stripe.Invoice {
    const id = newId("in");
    const lines = sub.items.data.map((item) => {
      const price = item.price;
      let quantity = item.quantity ?? 1;
      let amount = quantity * (price.unit_amount ?? 0);
      let description = `${quantity} × ${price.nickname ?? "subscription"}`;
      if (price.recurring?.usage_type === "metered") {
        const meter = this.meters.get(price.recurring.meter ?? "");
        quantity = this.meterEvents
          .filter(
            (e) =>
              e.customer === sub.customer &&
              e.event_name === meter?.event_name &&
              e.timestamp >= period.start &&
              e.timestamp < period.end,
          )
          .reduce((sum, e) => sum + e.value, 0);
        amount = Math.round(quantity * (price.unit_amount_decimal?.toNumber() ?? 0));
        description = price.nickname ?? meter?.display_name ?? "usage";
      }
      return invoiceLineObject({ amount, currency: price.currency, description, invoice: id, quantity, item, period });
    });
    const customer = this.customer(sub.customer);
    const number = `${customer.invoice_prefix}-${String(customer.next_invoice_sequence).padStart(4, "0")}`;
    customer.next_invoice_sequence += 1;
    const invoice = invoiceObject({
      id,
      customer: sub.customer,
      customer_email: customer.email,
      customer_name: customer.name ?? null,
      number,
      currency: sub.currency,
      created: this.now(),
      lines: listOf(lines, `/v1/invoices/${id}/lines`),
      period_start: period.start,
      period_end: period.end,
      billing_reason: billingReason,
      hosted_invoice_url: `${baseUrl}/invoices/${id}`,
      status,
      subscription: sub,
    });
    sub.latest_invoice = id;
    this.invoices.set(id, invoice);
    return invoice;
  }
}

/** What a route may do besides answering: emit webhook events (delivered in order). */
export interface ApiContext {
  store: Store;
  baseUrl: string;
  emit(event: EventInput): Promise<void>;
}
