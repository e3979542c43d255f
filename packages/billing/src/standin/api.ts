import type Stripe from "stripe";
import { cancelSubscription, updateSubscription } from "./lifecycle.js";
import {
  type ApiContext,
  absoluteUrl,
  bool,
  invalid,
  list,
  matches,
  metadata,
  missing,
  opt,
  type Params,
  str,
} from "./resources.js";
import {
  checkoutSessionObject,
  customerObject,
  meterEventObject,
  meterObject,
  newId,
  portalSessionObject,
  priceObject,
  productObject,
} from "./shapes.js";

/** Every answer is one of the SDK's types: the compiler holds the stand-in to Stripe's shapes. */
type Answer =
  | Stripe.Customer
  | Stripe.Product
  | Stripe.Price
  | Stripe.Billing.Meter
  | Stripe.Billing.MeterEvent
  | Stripe.Checkout.Session
  | Stripe.BillingPortal.Session
  | Stripe.Subscription
  | Stripe.Invoice
  | Stripe.ApiList<Stripe.Product | Stripe.Price | Stripe.Billing.Meter | Stripe.Subscription | Stripe.Invoice>;
type Handler = (ctx: ApiContext, params: Params, id: string) => Answer | Promise<Answer>;

function product(ctx: ApiContext, params: Params): Stripe.Product {
  const p = productObject({
    name: str(params, "name"),
    active: bool(params.active) ?? true,
    metadata: metadata(params),
    created: ctx.store.now(),
  });
  ctx.store.products.set(p.id, p);
  return p;
}

function meter(ctx: ApiContext, params: Params): Stripe.Billing.Meter {
  const event_name = str(params, "event_name");
  const display_name = str(params, "display_name");
  const formula = (params.default_aggregation as Params | undefined)?.formula;
  if (formula === undefined) throw missing("default_aggregation[formula]");
  if (formula !== "sum" && formula !== "count" && formula !== "last")
    throw invalid("default_aggregation[formula]", "must be sum, count or last");
  if ([...ctx.store.meters.values()].some((m) => m.event_name === event_name && m.status === "active")) {
    throw invalid("event_name", `an active meter with event_name '${event_name}' already exists`);
  }
  const mapping = (params.customer_mapping as Params | undefined) ?? {};
  if (mapping.type !== undefined && mapping.type !== "by_id") throw invalid("customer_mapping[type]", "must be by_id");
  const value = (params.value_settings as Params | undefined) ?? {};
  const m = meterObject({
    display_name,
    event_name,
    default_aggregation: { formula },
    customer_mapping: { event_payload_key: opt(mapping, "event_payload_key") ?? "stripe_customer_id", type: "by_id" },
    value_settings: { event_payload_key: opt(value, "event_payload_key") ?? "value" },
    created: ctx.store.now(),
  });
  ctx.store.meters.set(m.id, m);
  return m;
}

function price(ctx: ApiContext, params: Params): Stripe.Price {
  const productId = str(params, "product");
  ctx.store.get(ctx.store.products, "product", productId);
  const currency = str(params, "currency");
  const recurring = (params.recurring as Params | undefined) ?? null;
  let usage: "licensed" | "metered" = "licensed";
  const unitAmount = opt(params, "unit_amount");
  const decimal = opt(params, "unit_amount_decimal");
  const amount = decimal ?? unitAmount;
  if (amount === undefined) throw missing("unit_amount");
  if (unitAmount !== undefined && !/^\d+$/.test(unitAmount))
    throw invalid("unit_amount", "must be a non-negative integer");
  if (decimal !== undefined && !/^\d+(\.\d{1,12})?$/.test(decimal))
    throw invalid("unit_amount_decimal", "must be a decimal");
  if (recurring !== null) {
    if (!["month", "year", "week", "day"].includes(recurring.interval as string))
      throw invalid("recurring[interval]", "must be day, week, month or year");
    const asked = recurring.usage_type ?? "licensed";
    if (asked !== "licensed" && asked !== "metered")
      throw invalid("recurring[usage_type]", "must be licensed or metered");
    usage = asked;
    if (usage === "metered") {
      if (recurring.meter === undefined) throw missing("recurring[meter]");
      ctx.store.get(ctx.store.meters, "billing.meter", recurring.meter as string);
    }
  }
  const lookupKey = opt(params, "lookup_key");
  if (lookupKey !== undefined) {
    const holder = [...ctx.store.prices.values()].find((p) => p.lookup_key === lookupKey && p.active);
    if (holder !== undefined) {
      if (bool(params.transfer_lookup_key) !== true) {
        throw invalid("lookup_key", `A price (\`${holder.id}\`) already uses that lookup key.`);
      }
      holder.lookup_key = null;
    }
  }
  const p = priceObject({
    product: productId,
    currency,
    unit_amount: unitAmount === undefined ? null : Number(unitAmount),
    unit_amount_decimal: amount,
    recurring:
      recurring === null
        ? null
        : { interval: String(recurring.interval), usage_type: usage, meter: opt(recurring, "meter") ?? null },
    lookup_key: lookupKey ?? null,
    nickname: opt(params, "nickname") ?? null,
    metadata: metadata(params),
    created: ctx.store.now(),
  });
  ctx.store.prices.set(p.id, p);
  return p;
}

function meterEvent(ctx: ApiContext, params: Params): Stripe.Billing.MeterEvent {
  const event_name = str(params, "event_name");
  const m = [...ctx.store.meters.values()].find((x) => x.event_name === event_name && x.status === "active");
  if (m === undefined) throw invalid("event_name", `no active meter has event_name '${event_name}'`);
  const payload = (params.payload as Record<string, string> | undefined) ?? {};
  const customerKey = m.customer_mapping.event_payload_key;
  const valueKey = m.value_settings.event_payload_key;
  const customer = payload[customerKey];
  if (customer === undefined) throw missing(`payload[${customerKey}]`);
  ctx.store.customer(customer, `payload[${customerKey}]`);
  const raw = payload[valueKey];
  if (raw === undefined) throw missing(`payload[${valueKey}]`);
  if (!/^\d+$/.test(raw)) throw invalid(`payload[${valueKey}]`, "must be a non-negative whole number");
  const now = ctx.store.now();
  const timestamp = params.timestamp === undefined ? now : Number(params.timestamp);
  if (!Number.isInteger(timestamp) || timestamp < now - 35 * 86_400 || timestamp > now + 300) {
    throw invalid("timestamp", "must be within the past 35 calendar days or up to 5 minutes in the future");
  }
  const identifier = opt(params, "identifier") ?? newId("mev");
  // Stripe checks uniqueness asynchronously: a duplicate is answered like any event, not counted.
  if (ctx.store.meterEvents.some((e) => e.identifier === identifier)) ctx.store.duplicates.push(identifier);
  else ctx.store.meterEvents.push({ event_name, identifier, customer, value: Number(raw), timestamp });
  return meterEventObject({ created: now, event_name, identifier, payload, timestamp });
}

function checkoutSession(ctx: ApiContext, params: Params): Stripe.Checkout.Session {
  if (params.mode === undefined) throw missing("mode");
  if (params.mode !== "subscription") throw invalid("mode", "this stand-in serves mode=subscription only");
  const customer = str(params, "customer");
  ctx.store.customer(customer);
  const success_url = absoluteUrl(params, "success_url");
  const cancel_url = absoluteUrl(params, "cancel_url");
  const asked = params.line_items as Params[] | undefined;
  if (!Array.isArray(asked)) throw missing("line_items");
  const prices = asked.map((item, i) => {
    const priceId = item.price as string | undefined;
    if (priceId === undefined) throw missing(`line_items[${i}][price]`);
    const p = ctx.store.prices.get(priceId);
    if (p === undefined || !p.active) throw invalid(`line_items[${i}][price]`, `No such active price: '${priceId}'`);
    if (p.recurring === null)
      throw invalid(`line_items[${i}][price]`, "this stand-in subscribes to recurring prices only");
    return p;
  });
  const currency = prices[0]?.currency;
  if (currency === undefined) throw missing("line_items");
  if (prices.some((p) => p.currency !== currency))
    throw invalid("line_items", "All prices on a Checkout Session must be in the same currency");
  let amount = 0;
  const items = prices.map((p, i) => {
    const quantity = asked[i]?.quantity;
    const metered = p.recurring?.usage_type === "metered";
    if (metered && quantity !== undefined) {
      throw invalid(`line_items[${i}][quantity]`, "Quantity should not be specified where usage_type is `metered`.");
    }
    if (metered) return { price: p.id };
    if (quantity === undefined || !(Number(quantity) >= 1)) throw missing(`line_items[${i}][quantity]`);
    amount += Number(quantity) * (p.unit_amount ?? 0);
    return { price: p.id, quantity: Number(quantity) };
  });
  const session = checkoutSessionObject({
    customer,
    client_reference_id: opt(params, "client_reference_id") ?? null,
    metadata: metadata(params),
    success_url,
    cancel_url,
    created: ctx.store.now(),
    currency,
    amount,
    baseUrl: ctx.baseUrl,
  });
  const subscriptionMetadata = metadata((params.subscription_data as Params | undefined) ?? {});
  ctx.store.sessions.set(session.id, { session, customer, items, subscriptionMetadata });
  return session;
}

/**
 * The routes: `METHOD /path` with `:id`, each a handler. POSTs that create need an
 * Idempotency-Key; `keyed` ones (a duplicate would bill or confuse) need the caller's own key,
 * not one the SDK made up for its retries.
 */
export const ROUTES: { method: string; path: string; handler: Handler; creates?: boolean; keyed?: boolean }[] = [
  {
    method: "POST",
    path: "/v1/customers",
    creates: true,
    keyed: true,
    handler: (ctx, p) => {
      const c = customerObject({
        name: opt(p, "name") ?? null,
        email: opt(p, "email") ?? null,
        metadata: metadata(p),
        created: ctx.store.now(),
      });
      ctx.store.customers.set(c.id, c);
      return c;
    },
  },
  {
    method: "GET",
    path: "/v1/customers/:id",
    handler: (ctx, _p, id) => ctx.store.get(ctx.store.customers, "customer", id),
  },
  {
    method: "POST",
    path: "/v1/customers/:id",
    handler: (ctx, p, id) => {
      const c = ctx.store.get(ctx.store.customers, "customer", id);
      if (p.metadata !== undefined) c.metadata = { ...c.metadata, ...metadata(p) };
      c.name = opt(p, "name") ?? c.name ?? null;
      c.email = opt(p, "email") ?? c.email;
      return c;
    },
  },
  { method: "POST", path: "/v1/products", creates: true, keyed: true, handler: product },
  {
    method: "GET",
    path: "/v1/products",
    handler: (ctx, q) =>
      list(
        [...ctx.store.products.values()].filter((p) => matches(q, "active", p.active)),
        q,
        "/v1/products",
      ),
  },
  {
    method: "GET",
    path: "/v1/products/:id",
    handler: (ctx, _p, id) => ctx.store.get(ctx.store.products, "product", id),
  },
  { method: "POST", path: "/v1/prices", creates: true, keyed: true, handler: price },
  {
    method: "GET",
    path: "/v1/prices",
    handler: (ctx, q) => {
      const keys = q.lookup_keys as string[] | undefined;
      const found = [...ctx.store.prices.values()].filter(
        (p) =>
          matches(q, "product", p.product) &&
          matches(q, "active", p.active) &&
          (keys === undefined || (p.lookup_key !== null && keys.includes(p.lookup_key))),
      );
      return list(found, q, "/v1/prices");
    },
  },
  { method: "GET", path: "/v1/prices/:id", handler: (ctx, _p, id) => ctx.store.get(ctx.store.prices, "price", id) },
  {
    method: "POST",
    path: "/v1/prices/:id",
    handler: (ctx, p, id) => {
      const found = ctx.store.get(ctx.store.prices, "price", id);
      found.active = bool(p.active) ?? found.active;
      if (p.metadata !== undefined) found.metadata = { ...found.metadata, ...metadata(p) };
      return found;
    },
  },
  { method: "POST", path: "/v1/billing/meters", creates: true, keyed: true, handler: meter },
  {
    method: "GET",
    path: "/v1/billing/meters",
    handler: (ctx, q) =>
      list(
        [...ctx.store.meters.values()].filter((m) => matches(q, "status", m.status)),
        q,
        "/v1/billing/meters",
      ),
  },
  {
    method: "GET",
    path: "/v1/billing/meters/:id",
    handler: (ctx, _p, id) => ctx.store.get(ctx.store.meters, "billing.meter", id),
  },
  { method: "POST", path: "/v1/billing/meter_events", creates: true, keyed: true, handler: meterEvent },
  { method: "POST", path: "/v1/checkout/sessions", creates: true, keyed: true, handler: checkoutSession },
  {
    method: "GET",
    path: "/v1/checkout/sessions/:id",
    handler: (ctx, _p, id) => ctx.store.get(ctx.store.sessions, "checkout.session", id).session,
  },
  {
    method: "POST",
    path: "/v1/billing_portal/sessions",
    creates: true,
    handler: (ctx, p) => {
      const customer = str(p, "customer");
      ctx.store.customer(customer);
      const session = portalSessionObject({
        customer,
        return_url: opt(p, "return_url") ?? null,
        configuration: ctx.store.portalConfiguration,
        created: ctx.store.now(),
        baseUrl: ctx.baseUrl,
      });
      ctx.store.portals.set(session.id, session);
      return session;
    },
  },
  {
    method: "GET",
    path: "/v1/subscriptions",
    handler: (ctx, q) => {
      const status = (q.status as string | undefined) ?? "active_or_past";
      const subs = [...ctx.store.subscriptions.values()].filter(
        (s) =>
          matches(q, "customer", s.customer) &&
          (status === "all" ? true : status === "active_or_past" ? s.status !== "canceled" : s.status === status),
      );
      return list(subs, q, "/v1/subscriptions");
    },
  },
  {
    method: "GET",
    path: "/v1/subscriptions/:id",
    handler: (ctx, _p, id) => ctx.store.get(ctx.store.subscriptions, "subscription", id),
  },
  { method: "POST", path: "/v1/subscriptions/:id", handler: updateSubscription },
  { method: "DELETE", path: "/v1/subscriptions/:id", handler: cancelSubscription },
  {
    method: "GET",
    path: "/v1/invoices",
    handler: (ctx, q) => {
      const found = [...ctx.store.invoices.values()].filter(
        (i) =>
          matches(q, "customer", i.customer) &&
          matches(q, "status", i.status) &&
          matches(q, "subscription", i.parent?.subscription_details?.subscription),
      );
      return list(found, q, "/v1/invoices");
    },
  },
  {
    method: "GET",
    path: "/v1/invoices/:id",
    handler: (ctx, _p, id) => ctx.store.get(ctx.store.invoices, "invoice", id),
  },
];
