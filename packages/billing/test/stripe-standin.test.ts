// The Stripe stand-in through the real `stripe` SDK: it refuses what Stripe refuses (so a wrong
// call fails a test), replays idempotent requests, serves the hosted checkout and portal, and
// signs its webhooks so that `constructEvent` accepts them.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStripe } from "../src/index.js";
import { type StripeStandIn, startStripeStandIn } from "../src/standin/index.js";

const SECRET = "whsec_standin_test";
let standin: StripeStandIn;
let stripe: Stripe;
let receiver: Server;
const received: Stripe.Event[] = [];

beforeAll(async () => {
  // These tests make objects without keys of their own; the rule that Prim's creates carry
  // their own keys is tested on its own below.
  standin = await startStripeStandIn({ webhookSecret: SECRET, ownIdempotencyKeys: false });
  stripe = createStripe({ secretKey: "sk_test_standin", apiUrl: standin.url });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        received.push(
          stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers["stripe-signature"]), SECRET),
        );
        res.writeHead(200).end("{}");
      } catch {
        res.writeHead(400).end("bad signature");
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  standin.setWebhookUrl(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
});

afterAll(async () => {
  await standin?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** A product, a meter and a licensed and a metered price. */
async function catalog() {
  const product = await stripe.products.create({ name: "Test Pro" });
  const meter = await stripe.billing.meters.create({
    display_name: "Calls",
    event_name: `calls_${product.id}`,
    default_aggregation: { formula: "sum" },
  });
  const base = await stripe.prices.create({
    product: product.id,
    currency: "usd",
    unit_amount: 2500,
    recurring: { interval: "month" },
  });
  const metered = await stripe.prices.create({
    product: product.id,
    currency: "usd",
    unit_amount_decimal: Stripe.Decimal.from("0.00005"),
    recurring: { interval: "month", usage_type: "metered", meter: meter.id },
  });
  return { product, meter, base, metered };
}

describe("the stand-in refuses what Stripe refuses", () => {
  it("a key that is not a test secret key", async () => {
    const wrong = createStripe({ secretKey: "pk_live_nope", apiUrl: standin.url, maxNetworkRetries: 0 });
    await expect(wrong.customers.create({ name: "x" })).rejects.toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });

  it("missing fields, unknown ids, a metered price without a meter, a lookup key taken", async () => {
    await expect(stripe.products.create({} as Stripe.ProductCreateParams)).rejects.toMatchObject({ param: "name" });
    await expect(stripe.customers.retrieve("cus_missing")).rejects.toMatchObject({
      statusCode: 404,
      code: "resource_missing",
    });
    const { product } = await catalog();
    await expect(
      stripe.prices.create({
        product: product.id,
        currency: "usd",
        unit_amount: 1,
        recurring: { interval: "month", usage_type: "metered" },
      }),
    ).rejects.toMatchObject({ param: "recurring[meter]" });
    const key = `key_${product.id}`;
    await stripe.prices.create({ product: product.id, currency: "usd", unit_amount: 1, lookup_key: key });
    await expect(
      stripe.prices.create({ product: product.id, currency: "usd", unit_amount: 2, lookup_key: key }),
    ).rejects.toMatchObject({
      param: "lookup_key",
    });
    const moved = await stripe.prices.create({
      product: product.id,
      currency: "usd",
      unit_amount: 2,
      lookup_key: key,
      transfer_lookup_key: true,
    });
    expect((await stripe.prices.list({ lookup_keys: [key] })).data.map((p) => p.id)).toEqual([moved.id]);
  });

  it("meter events: whole non-negative values, a known meter and customer, a recent timestamp; duplicates not counted", async () => {
    const { meter } = await catalog();
    const customer = await stripe.customers.create({ name: "Metered" });
    const send = (payload: Record<string, string>, extra: Partial<Stripe.Billing.MeterEventCreateParams> = {}) =>
      stripe.billing.meterEvents.create({ event_name: meter.event_name, payload, ...extra });
    await expect(send({ stripe_customer_id: customer.id, value: "1.5" })).rejects.toMatchObject({
      param: "payload[value]",
    });
    await expect(send({ stripe_customer_id: customer.id, value: "-1" })).rejects.toMatchObject({
      param: "payload[value]",
    });
    await expect(send({ stripe_customer_id: "cus_nobody", value: "1" })).rejects.toMatchObject({ statusCode: 404 });
    await expect(
      send({ stripe_customer_id: customer.id, value: "1" }, { event_name: "no_such_meter" }),
    ).rejects.toMatchObject({
      param: "event_name",
    });
    const old = Math.floor(Date.now() / 1000) - 36 * 86_400;
    await expect(send({ stripe_customer_id: customer.id, value: "1" }, { timestamp: old })).rejects.toMatchObject({
      param: "timestamp",
    });
    await send({ stripe_customer_id: customer.id, value: "7" }, { identifier: "dup-1" });
    await send({ stripe_customer_id: customer.id, value: "7" }, { identifier: "dup-1" });
    expect(standin.meterEvents().filter((e) => e.identifier === "dup-1")).toHaveLength(1);
    expect(standin.duplicateMeterEvents()).toContain("dup-1");
  });

  it("checkout sessions: absolute URLs, quantities only on licensed prices", async () => {
    const { base, metered } = await catalog();
    const customer = await stripe.customers.create({ name: "Buyer" });
    const params = {
      mode: "subscription" as const,
      customer: customer.id,
      success_url: "https://dash.test/ok",
      cancel_url: "https://dash.test/no",
      line_items: [{ price: base.id, quantity: 1 }, { price: metered.id }],
    };
    await expect(stripe.checkout.sessions.create({ ...params, success_url: undefined })).rejects.toMatchObject({
      param: "success_url",
    });
    await expect(
      stripe.checkout.sessions.create({ ...params, line_items: [{ price: metered.id, quantity: 1 }] }),
    ).rejects.toMatchObject({ param: "line_items[0][quantity]" });
    await expect(
      stripe.checkout.sessions.create({ ...params, line_items: [{ price: base.id }] }),
    ).rejects.toMatchObject({
      param: "line_items[0][quantity]",
    });
  });
});

describe("idempotency", () => {
  it("refuses a create that must not be duplicated without the caller's own key", async () => {
    const strict = await startStripeStandIn({ webhookSecret: SECRET });
    try {
      const client = createStripe({ secretKey: "sk_test_strict", apiUrl: strict.url });
      // The SDK keys every POST itself (stripe-node-retry-…): not good enough for a customer.
      await expect(client.customers.create({ name: "Unkeyed" })).rejects.toMatchObject({ param: "Idempotency-Key" });
      const made = await client.customers.create({ name: "Keyed" }, { idempotencyKey: "prim-customer-ws_1" });
      expect(made.id).toMatch(/^cus_/);
    } finally {
      await strict.close();
    }
  });

  it("replays the same request and refuses a key reused with other parameters", async () => {
    const first = await stripe.customers.create({ name: "Once" }, { idempotencyKey: "same-key" });
    const again = await stripe.customers.create({ name: "Once" }, { idempotencyKey: "same-key" });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    await expect(stripe.customers.create({ name: "Twice" }, { idempotencyKey: "same-key" })).rejects.toBeInstanceOf(
      Stripe.errors.StripeIdempotencyError,
    );
  });

  it("fails the next calls when told to (a Stripe outage)", async () => {
    const noRetry = createStripe({ secretKey: "sk_test_standin", apiUrl: standin.url, maxNetworkRetries: 0 });
    standin.failNext(1, 500);
    await expect(noRetry.products.list()).rejects.toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((await noRetry.products.list()).object).toBe("list");
  });

  it("pages lists for the SDK's auto-pagination", async () => {
    const product = await stripe.products.create({ name: "Many prices" });
    for (let i = 0; i < 5; i++)
      await stripe.prices.create({ product: product.id, currency: "usd", unit_amount: 100 + i });
    const seen: number[] = [];
    for await (const price of stripe.prices.list({ product: product.id, limit: 2 }))
      seen.push(price.unit_amount as number);
    expect(seen.sort()).toEqual([100, 101, 102, 103, 104]);
  });
});

describe("checkout, portal and the subscription's life, with signed webhooks", () => {
  it("pays on the hosted page, cancels in the portal, ends at the period with the metered usage invoiced", async () => {
    const { base, metered, meter } = await catalog();
    const customer = await stripe.customers.create({ name: "Lifecycle" });
    const session = await stripe.checkout.sessions.create({
      mode: "subscription",
      customer: customer.id,
      client_reference_id: "ws_1",
      success_url: "https://dash.test/ok?s={CHECKOUT_SESSION_ID}",
      cancel_url: "https://dash.test/no",
      line_items: [{ price: base.id, quantity: 1 }, { price: metered.id }],
    });
    const page = await (await fetch(session.url as string)).text();
    expect(page).toContain("Pay and subscribe");
    const from = received.length;
    const paid = await fetch(`${standin.url}/checkout/${session.id}/pay`, { method: "POST", redirect: "manual" });
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toBe(`https://dash.test/ok?s=${session.id}`);
    expect(received.slice(from).map((e) => e.type)).toEqual([
      "checkout.session.completed",
      "customer.subscription.created",
      "invoice.paid",
    ]);
    const done = await stripe.checkout.sessions.retrieve(session.id);
    expect(done).toMatchObject({ status: "complete", payment_status: "paid" });
    const sub = await stripe.subscriptions.retrieve(done.subscription as string);
    expect(sub.status).toBe("active");

    for (const value of ["1000000", "1000000", "500000"]) {
      await stripe.billing.meterEvents.create({
        event_name: meter.event_name,
        payload: { stripe_customer_id: customer.id, value },
      });
    }
    await standin.endPeriod(sub.id);
    const invoices = await stripe.invoices.list({ customer: customer.id });
    expect(invoices.data[0]?.total).toBe(2500 + 125); // 2.5M × 0.00005¢ = 125¢

    const portal = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: "https://dash.test/billing",
    });
    expect(await (await fetch(portal.url)).text()).toContain("Cancel plan");
    const body = new URLSearchParams({ subscription: sub.id });
    await fetch(`${standin.url}/portal/${portal.id}/cancel`, { method: "POST", body, redirect: "manual" });
    expect((await stripe.subscriptions.retrieve(sub.id)).cancel_at_period_end).toBe(true);
    await standin.endPeriod(sub.id);
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe("canceled");
    expect(received.at(-1)?.type).toBe("customer.subscription.deleted");
    expect(standin.deliveries().every((d) => d.status === 200)).toBe(true);
  });

  it("a failed payment makes it past_due with an open invoice; paying ends it", async () => {
    const { base } = await catalog();
    const customer = await stripe.customers.create({ name: "Late" });
    const session = await stripe.checkout.sessions.create({
      mode: "subscription",
      customer: customer.id,
      success_url: "https://dash.test/ok",
      cancel_url: "https://dash.test/no",
      line_items: [{ price: base.id, quantity: 1 }],
    });
    const { subscription } = await standin.completeCheckout(session.id);
    await standin.failPayment(subscription);
    expect((await stripe.subscriptions.retrieve(subscription)).status).toBe("past_due");
    expect((await stripe.invoices.list({ customer: customer.id, status: "open" })).data).toHaveLength(1);
    expect(received.at(-2)?.type).toBe("invoice.payment_failed");
    await standin.payInvoice(subscription);
    expect((await stripe.subscriptions.retrieve(subscription)).status).toBe("active");
    expect((await stripe.invoices.list({ customer: customer.id, status: "open" })).data).toHaveLength(0);
  });
});
