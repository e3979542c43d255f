// The stand-in's objects as the real `stripe` SDK receives them. Their shapes are held to the
// SDK's types at compile time (src/standin/shapes.ts); this checks, per kind of object, that
// what goes over the wire is what Stripe sends: the object tag, test mode, ids with Stripe's
// prefixes, nulls where Stripe has nothing to say, decimals as strings, lists and errors in
// Stripe's envelopes, and webhook events that carry each object whole.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStripe } from "../src/index.js";
import { type StripeStandIn, startStripeStandIn } from "../src/standin/index.js";

const SECRET = "whsec_shapes_test";
const KEY = "sk_test_shapes";
let standin: StripeStandIn;
let stripe: Stripe;
let receiver: Server;
const received: Stripe.Event[] = [];

beforeAll(async () => {
  standin = await startStripeStandIn({ webhookSecret: SECRET, ownIdempotencyKeys: false });
  stripe = createStripe({ secretKey: KEY, apiUrl: standin.url });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push(
        stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers["stripe-signature"]), SECRET),
      );
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  standin.setWebhookUrl(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
});

afterAll(async () => {
  await standin?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The JSON the stand-in sends for a GET, as it is on the wire (before the SDK turns decimals into objects). */
async function wire(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${standin.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  return (await res.json()) as Record<string, unknown>;
}

/** A customer subscribed through Checkout to a licensed and a metered price. */
async function subscribed() {
  const product = await stripe.products.create({ name: "Shapes Pro" });
  const meter = await stripe.billing.meters.create({
    display_name: "Calls",
    event_name: `calls_${product.id}`,
    default_aggregation: { formula: "sum" },
  });
  const base = await stripe.prices.create({
    product: product.id,
    currency: "usd",
    unit_amount: 2500,
    nickname: "Pro",
    recurring: { interval: "month" },
  });
  const metered = await stripe.prices.create({
    product: product.id,
    currency: "usd",
    unit_amount_decimal: Stripe.Decimal.from("0.00005"),
    recurring: { interval: "month", usage_type: "metered", meter: meter.id },
  });
  const customer = await stripe.customers.create({ name: "Shapes", email: "shapes@example.test" });
  const session = await stripe.checkout.sessions.create({
    mode: "subscription",
    customer: customer.id,
    client_reference_id: "ws_shapes",
    success_url: "https://dash.test/ok",
    cancel_url: "https://dash.test/no",
    line_items: [{ price: base.id, quantity: 1 }, { price: metered.id }],
  });
  return { product, meter, base, metered, customer, session };
}

describe("objects as Stripe sends them", () => {
  it("customers, products, prices and meters", async () => {
    const { product, meter, base, metered, customer } = await subscribed();
    expect(customer).toMatchObject({ object: "customer", livemode: false, balance: 0, email: "shapes@example.test" });
    expect(customer.id).toMatch(/^cus_/);
    expect(customer.invoice_settings).toEqual({
      custom_fields: null,
      default_payment_method: null,
      footer: null,
      rendering_options: null,
    });
    expect((await stripe.customers.retrieve(customer.id)).object).toBe("customer");

    expect(product).toMatchObject({ object: "product", livemode: false, active: true, type: "service", images: [] });
    expect(product.id).toMatch(/^prod_/);
    expect(product.updated).toBe(product.created);

    expect(base).toMatchObject({ object: "price", livemode: false, type: "recurring", billing_scheme: "per_unit" });
    expect(base.id).toMatch(/^price_/);
    expect(base.recurring).toEqual({
      interval: "month",
      interval_count: 1,
      meter: null,
      trial_period_days: null,
      usage_type: "licensed",
    });
    expect(metered.unit_amount).toBeNull();
    expect(String(metered.unit_amount_decimal)).toBe("0.00005"); // the SDK made it a Decimal
    expect((await wire(`/v1/prices/${metered.id}`)).unit_amount_decimal).toBe("0.00005");
    expect((await wire(`/v1/prices/${base.id}`)).unit_amount_decimal).toBe("2500");

    expect(meter).toMatchObject({
      object: "billing.meter",
      livemode: false,
      status: "active",
      customer_mapping: { event_payload_key: "stripe_customer_id", type: "by_id" },
      value_settings: { event_payload_key: "value" },
      status_transitions: { deactivated_at: null },
      event_time_window: null,
    });
    expect(meter.id).toMatch(/^mtr_/);
    const event = await stripe.billing.meterEvents.create({
      event_name: meter.event_name,
      payload: { stripe_customer_id: customer.id, value: "3" },
    });
    expect(event).toMatchObject({ object: "billing.meter_event", livemode: false, event_name: meter.event_name });
    expect(event.identifier).toMatch(/^mev_/);
  });

  it("checkout and portal sessions", async () => {
    const { customer, session } = await subscribed();
    expect(session).toMatchObject({
      object: "checkout.session",
      livemode: false,
      mode: "subscription",
      status: "open",
      payment_status: "unpaid",
      amount_total: 2500,
      currency: "usd",
      customer_details: null,
      subscription: null,
      invoice: null,
      ui_mode: "hosted_page",
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.expires_at).toBe(session.created + 86_400);
    await standin.completeCheckout(session.id);
    const done = await stripe.checkout.sessions.retrieve(session.id);
    expect(done).toMatchObject({ status: "complete", payment_status: "paid" });
    expect(done.subscription).toMatch(/^sub_/);
    expect(done.invoice).toMatch(/^in_/);
    expect(done.customer_details).toMatchObject({ email: customer.email, name: "Shapes" });

    const portal = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: "https://dash.test",
    });
    expect(portal).toMatchObject({ object: "billing_portal.session", livemode: false, flow: null, locale: null });
    expect(portal.id).toMatch(/^bps_/);
    expect(portal.configuration).toMatch(/^bpc_/);
  });

  it("subscriptions and invoices, their items and lines, in lists", async () => {
    const { base, metered, customer, session } = await subscribed();
    const { subscription } = await standin.completeCheckout(session.id);
    const sub = await stripe.subscriptions.retrieve(subscription);
    expect(sub).toMatchObject({
      object: "subscription",
      livemode: false,
      status: "active",
      currency: "usd",
      collection_method: "charge_automatically",
      cancel_at: null,
      trial_end: null,
      metadata: {},
    });
    expect(sub.items).toMatchObject({ object: "list", has_more: false });
    const [licensed, usage] = sub.items.data;
    expect(licensed).toMatchObject({ object: "subscription_item", quantity: 1, subscription: sub.id });
    expect(licensed?.id).toMatch(/^si_/);
    expect(licensed?.price.id).toBe(base.id);
    expect(licensed?.plan).toMatchObject({ object: "plan", id: base.id, amount: 2500, usage_type: "licensed" });
    expect(usage?.quantity).toBeUndefined(); // a metered item has none
    expect(usage?.plan).toMatchObject({ id: metered.id, usage_type: "metered", amount: null });

    const invoices = await stripe.invoices.list({ customer: customer.id });
    expect(invoices).toMatchObject({ object: "list", url: "/v1/invoices", has_more: false });
    const [invoice] = invoices.data;
    if (invoice === undefined) throw new Error("no invoice");
    expect(invoice).toMatchObject({
      object: "invoice",
      livemode: false,
      status: "paid",
      billing_reason: "subscription_create",
      amount_paid: 2500,
      amount_remaining: 0,
      customer_email: customer.email,
      parent: { type: "subscription_details", subscription_details: { subscription: sub.id } },
    });
    expect(invoice.id).toMatch(/^in_/);
    expect(invoice.number).toMatch(/^[0-9A-F]{8}-0001$/);
    expect(sub.latest_invoice).toBe(invoice.id);
    expect(invoice.status_transitions.paid_at).toBe(invoice.created);
    const [line] = invoice.lines.data;
    if (line === undefined) throw new Error("no invoice line");
    expect(line).toMatchObject({ object: "line_item", amount: 2500, quantity: 1, invoice: invoice.id });
    expect(line.id).toMatch(/^il_/);
    expect(line.parent?.subscription_item_details?.subscription_item).toBe(licensed?.id);
    expect(line.pricing?.price_details?.price).toBe(base.id);

    const canceled = await stripe.subscriptions.cancel(sub.id);
    expect(canceled).toMatchObject({ status: "canceled", cancellation_details: { reason: "cancellation_requested" } });
    expect(canceled.ended_at).toBe(canceled.canceled_at);
  });

  it("errors in Stripe's envelope, with a link to the code's documentation", async () => {
    const body = await wire("/v1/customers/cus_nobody");
    expect(body).toEqual({
      error: {
        type: "invalid_request_error",
        code: "resource_missing",
        doc_url: "https://stripe.com/docs/error-codes/resource-missing",
        message: "No such customer: 'cus_nobody'",
        param: "id",
      },
    });
    const refused = await stripe.customers.retrieve("cus_nobody").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused).toMatchObject({
      code: "resource_missing",
      doc_url: "https://stripe.com/docs/error-codes/resource-missing",
      param: "id",
      statusCode: 404,
    });
  });
});

describe("webhook events", () => {
  it("each carries the whole object it is about, in an event envelope of the stand-in's API version", async () => {
    const from = received.length;
    const { session } = await subscribed();
    const { subscription } = await standin.completeCheckout(session.id);
    await standin.failPayment(subscription);
    await standin.payInvoice(subscription);
    await stripe.subscriptions.update(subscription, { cancel_at_period_end: true });
    await standin.endPeriod(subscription);
    const events = received.slice(from);
    expect(events.map((e) => e.type)).toEqual([
      "checkout.session.completed",
      "customer.subscription.created",
      "invoice.paid",
      "invoice.payment_failed",
      "customer.subscription.updated",
      "invoice.paid",
      "customer.subscription.updated",
      "customer.subscription.updated",
      "customer.subscription.deleted",
    ]);
    for (const e of events) {
      expect(e).toMatchObject({
        object: "event",
        livemode: false,
        api_version: "2026-10-28.endive",
        pending_webhooks: 1,
      });
      expect(e.id).toMatch(/^evt_/);
      expect(e.request).toEqual({ id: null, idempotency_key: null });
    }
    const objects = events.map((e) => (e.data.object as { object: string }).object);
    expect(objects).toEqual([
      "checkout.session",
      "subscription",
      "invoice",
      "invoice",
      "subscription",
      "invoice",
      "subscription",
      "subscription",
      "subscription",
    ]);
    const failed = events[3];
    if (failed?.type !== "invoice.payment_failed") throw new Error("expected invoice.payment_failed");
    expect(failed.data.object).toMatchObject({
      status: "open",
      amount_paid: 0,
      next_payment_attempt: expect.any(Number),
    });
    const paid = events[5];
    if (paid?.type !== "invoice.paid") throw new Error("expected invoice.paid");
    expect(paid.data.object).toMatchObject({ id: failed.data.object.id, status: "paid", attempt_count: 2 });
    const asked = events[7];
    if (asked?.type !== "customer.subscription.updated") throw new Error("expected customer.subscription.updated");
    expect(asked.data.object.cancel_at).toBe(asked.data.object.items.data[0]?.current_period_end);

    // Sent again, an event still carries its object as it was, not as it is now (canceled).
    const created = events[1];
    if (created?.type !== "customer.subscription.created") throw new Error("expected customer.subscription.created");
    expect(await standin.redeliver(created.id)).toBe(200);
    const again = received.at(-1);
    if (again?.type !== "customer.subscription.created") throw new Error("expected the event again");
    expect(again.id).toBe(created.id);
    expect(again.data.object).toMatchObject({ status: "active", cancel_at_period_end: false });
  });
});
