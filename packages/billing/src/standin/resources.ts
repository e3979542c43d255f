import { randomBytes } from "node:crypto";

/** A Stripe-shaped error: `{ error: { type, code?, message, param? } }` with an HTTP status. */
export class StripeFault extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param?: string,
    readonly code?: string,
  ) {
    super(message);
  }
  toAnswer(): { status: number; body: unknown } {
    return { status: this.status, body: this.body() };
  }
  body() {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code === undefined ? {} : { code: this.code }),
        ...(this.param === undefined ? {} : { param: this.param }),
      },
    };
  }
}

export type Obj = Record<string, any>;
export type Params = Record<string, unknown>;

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

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
export function list(all: Obj[], query: Params, url: string) {
  const limit = query.limit === undefined ? 10 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid("limit", "must be between 1 and 100");
  let items = [...all].reverse();
  const after = opt(query, "starting_after");
  if (after !== undefined) {
    const at = items.findIndex((o) => o.id === after);
    if (at < 0) throw notFound("object", after, "starting_after");
    items = items.slice(at + 1);
  }
  return { object: "list", data: items.slice(0, limit), has_more: items.length > limit, url };
}

/** The store of every object the stand-in holds, by kind and id (insertion order kept). */
export class Store {
  readonly customers = new Map<string, Obj>();
  readonly products = new Map<string, Obj>();
  readonly prices = new Map<string, Obj>();
  readonly meters = new Map<string, Obj>();
  readonly sessions = new Map<string, Obj & { line_items_internal: { price: string; quantity?: number }[] }>();
  readonly portals = new Map<string, Obj>();
  readonly subscriptions = new Map<string, Obj>();
  readonly invoices = new Map<string, Obj>();
  readonly events = new Map<string, Obj>();
  readonly meterEvents: {
    event_name: string;
    identifier: string;
    customer: string;
    value: number;
    timestamp: number;
  }[] = [];
  readonly duplicates: string[] = [];
  private invoiceNumber = 0;

  constructor(readonly now: () => number) {}

  get<T extends Obj>(map: Map<string, T>, kind: string, id: string): T {
    const found = map.get(id);
    if (found === undefined) throw notFound(kind, id);
    return found;
  }

  customer(id: string, param = "customer"): Obj {
    const c = this.customers.get(id);
    if (c === undefined) throw notFound("customer", id, param);
    return c;
  }

  nextInvoiceNumber(): string {
    this.invoiceNumber += 1;
    return `PRIM-${String(this.invoiceNumber).padStart(4, "0")}`;
  }

  /** An invoice for a subscription's period: licensed items × quantity, metered items from meter events. */
  makeInvoice(sub: Obj, status: "paid" | "open", periodStart: number, periodEnd: number, baseUrl: string): Obj {
    const lines: Obj[] = [];
    for (const item of sub.items.data as Obj[]) {
      const price = item.price as Obj;
      if (price.recurring?.usage_type === "metered") {
        const meter = this.meters.get(price.recurring.meter as string);
        const used = this.meterEvents
          .filter(
            (e) =>
              e.customer === sub.customer &&
              e.event_name === meter?.event_name &&
              e.timestamp >= periodStart &&
              e.timestamp < periodEnd,
          )
          .reduce((sum, e) => sum + e.value, 0);
        const amount = Math.round(used * Number(price.unit_amount_decimal));
        lines.push({ object: "line_item", description: price.nickname ?? meter?.display_name, quantity: used, amount });
      } else {
        const quantity = Number(item.quantity ?? 1);
        lines.push({
          object: "line_item",
          description: price.nickname ?? "subscription",
          quantity,
          amount: quantity * Number(price.unit_amount),
        });
      }
    }
    const total = lines.reduce((sum, l) => sum + l.amount, 0);
    const id = newId("in");
    const invoice: Obj = {
      id,
      object: "invoice",
      customer: sub.customer,
      status,
      number: this.nextInvoiceNumber(),
      currency: "usd",
      total,
      amount_due: total,
      amount_paid: status === "paid" ? total : 0,
      amount_remaining: status === "paid" ? 0 : total,
      created: this.now(),
      period_start: periodStart,
      period_end: periodEnd,
      hosted_invoice_url: `${baseUrl}/invoices/${id}`,
      livemode: false,
      parent: {
        type: "subscription_details",
        quote_details: null,
        subscription_details: { subscription: sub.id, metadata: sub.metadata },
      },
      lines: { object: "list", data: lines, has_more: false, url: `/v1/invoices/${id}/lines` },
    };
    this.invoices.set(id, invoice);
    return invoice;
  }
}

/** What a route may do besides answering: emit webhook events (delivered in order). */
export interface ApiContext {
  store: Store;
  baseUrl: string;
  emit(type: string, object: Obj): Promise<void>;
}

export const publicSession = (s: Obj): Obj => {
  const { line_items_internal: _, subscription_data_metadata: __, ...rest } = s;
  return structuredClone(rest);
};
