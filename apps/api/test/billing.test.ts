// Billing through Stripe (CLOUD.md, "Billing") against the local Stripe stand-in, driven by the
// real `stripe` SDK: checkout → signed webhooks → the plan in Postgres and the caps at once;
// cancellation at period end; a failed payment's grace period and its end; webhook signatures,
// old timestamps and replays refused with nothing changed; Enterprise never touched.
import { randomBytes } from "node:crypto";
import { checkoutSession, createStripe, ensureCustomer, runBillingOnce, type Stripe, syncStripe } from "@prim/billing";
import { type StripeStandIn, startStripeStandIn } from "@prim/billing/standin";
import { createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import StripeSdk from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString("hex")}`;
let standin: StripeStandIn;
let cloud: TestCloud;
let stripe: Stripe;
let webhookUrl: string;

beforeAll(async () => {
  standin = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  cloud = await startCloud(
    "billing",
    {
      PRIM_LIMITS: "on",
      STRIPE_SECRET_KEY: "sk_test_prim",
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: standin.url,
    },
    { billing: { intervalMs: 0 } },
  );
  webhookUrl = `${cloud.url}/v1/billing/webhook`;
  standin.setWebhookUrl(webhookUrl);
  stripe = createStripe({ secretKey: "sk_test_prim", apiUrl: standin.url });
  await syncStripe(stripe);
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
  await standin?.close();
});

const pool = () => cloud.api.hub.pool;
const planOf = async (ws: string) =>
  (await pool().query<{ plan: string }>("SELECT plan FROM workspaces WHERE id = $1", [ws])).rows[0]?.plan;

/** A Starter workspace with a kv, and a snapshot call that Starter refuses (403 plan_limit). */
async function starter(name: string) {
  const made = await createWorkspace(pool(), { name, plan: "starter" });
  expect((await call(cloud.url, made.key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
  const kv = await call(cloud.url, made.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
  expect(kv.status).toBe(201);
  const snapshot = () => call(cloud.url, made.key, "POST", `/v1/primitives/${kv.body.id}/snapshots`, {});
  return { id: made.workspace.id, key: made.key, snapshot };
}

/** Upgrades through Checkout as the dashboard does; answers the subscription id. */
async function upgrade(ws: { id: string }, name: string): Promise<string> {
  const customer = await ensureCustomer(pool(), stripe, { id: ws.id, name });
  const url = await checkoutSession(stripe, {
    customer,
    workspace: ws.id,
    billingPageUrl: `https://dash.prim.test/w/${ws.id}/billing`,
    attempt: "1",
  });
  const session = url.split("/").pop() as string;
  return (await standin.completeCheckout(session)).subscription;
}

describe("upgrade, downgrade, cancellation", () => {
  it("checkout → webhooks → Pro in Postgres, and Pro's features on the very next request", async () => {
    const ws = await starter("Upgrader");
    expect((await ws.snapshot()).body.error.code).toBe("plan_limit");
    const sub = await upgrade(ws, "Upgrader");
    expect(standin.deliveries().filter((d) => d.status !== 200)).toEqual([]);
    expect(await planOf(ws.id)).toBe("pro");
    const row = await pool().query("SELECT status, stripe_subscription_id FROM subscriptions WHERE workspace_id = $1", [
      ws.id,
    ]);
    expect(row.rows[0]).toEqual({ status: "active", stripe_subscription_id: sub });
    expect((await ws.snapshot()).status).toBe(201);
  });

  it("cancelling at the period's end keeps Pro until then, then Starter's limits apply at once", async () => {
    const ws = await starter("Leaver");
    const sub = await upgrade(ws, "Leaver");
    await stripe.subscriptions.update(sub, { cancel_at_period_end: true });
    expect(await planOf(ws.id)).toBe("pro");
    const row = await pool().query("SELECT cancel_at_period_end FROM subscriptions WHERE workspace_id = $1", [ws.id]);
    expect(row.rows[0]?.cancel_at_period_end).toBe(true);
    await standin.endPeriod(sub);
    expect(await planOf(ws.id)).toBe("starter");
    expect((await ws.snapshot()).body.error.code).toBe("plan_limit");
  });

  it("a subscription cancelled at once (downgrade) returns the workspace to Starter", async () => {
    const ws = await starter("Downgrader");
    const sub = await upgrade(ws, "Downgrader");
    await stripe.subscriptions.cancel(sub);
    expect(await planOf(ws.id)).toBe("starter");
  });
});

describe("a failed payment", () => {
  it("keeps Pro for the grace period, ends it when paid, and falls back to Starter when it runs out", async () => {
    const ws = await starter("Late payer");
    const sub = await upgrade(ws, "Late payer");
    await standin.failPayment(sub);
    const grace = async () =>
      (
        await pool().query<{ status: string; grace_until: Date | null }>(
          "SELECT status, grace_until FROM subscriptions WHERE workspace_id = $1",
          [ws.id],
        )
      ).rows[0];
    const during = await grace();
    expect(during?.status).toBe("past_due");
    const days = ((during?.grace_until?.getTime() ?? 0) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(13.9);
    expect(days).toBeLessThanOrEqual(14);
    expect(await planOf(ws.id)).toBe("pro");
    expect((await ws.snapshot()).status).toBe(201);

    await standin.payInvoice(sub);
    expect(await grace()).toMatchObject({ status: "active", grace_until: null });

    await standin.failPayment(sub);
    // Fourteen days later, still unpaid: the billing job ends Pro.
    const later = new Date(Date.now() + 15 * 86_400_000);
    const run = await runBillingOnce({
      pool: pool(),
      stripe,
      now: () => later,
      onPlanChanged: (w) => cloud.api.revocations.planChanged(w),
    });
    expect(run?.demoted).toEqual([ws.id]);
    expect(await planOf(ws.id)).toBe("starter");
    expect((await ws.snapshot()).body.error.code).toBe("plan_limit");
  });
});

describe("the webhook endpoint", () => {
  const post = (body: string, signature?: string) =>
    fetch(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(signature === undefined ? {} : { "stripe-signature": signature }),
      },
      body,
    });
  const eventCount = async () => (await pool().query("SELECT count(*)::int AS n FROM billing_events")).rows[0]?.n;

  it("refuses a missing or wrong signature and an old timestamp with 400, changing nothing", async () => {
    const ws = await starter("Forged");
    const payload = JSON.stringify({
      id: `evt_forged_${ws.id}`,
      object: "event",
      type: "customer.subscription.created",
      data: {
        object: {
          id: "sub_forged",
          object: "subscription",
          customer: "cus_x",
          status: "active",
          metadata: { workspace: ws.id },
        },
      },
    });
    const before = await eventCount();
    const noSig = await post(payload);
    expect(noSig.status).toBe(400);
    expect(((await noSig.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    const wrong = StripeSdk.webhooks.generateTestHeaderString({ payload, secret: "whsec_wrong" });
    expect((await post(payload, wrong)).status).toBe(400);
    const old = StripeSdk.webhooks.generateTestHeaderString({
      payload,
      secret: WEBHOOK_SECRET,
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    const stale = await post(payload, old);
    expect(stale.status).toBe(400);
    expect(((await stale.json()) as { error: { message: string } }).error.message).toMatch(/tolerance|timestamp/i);
    expect(await eventCount()).toBe(before);
    expect(await planOf(ws.id)).toBe("starter");
  });

  it("refuses a replayed event id with 400 and applies nothing twice", async () => {
    const ws = await starter("Replayed");
    const sub = await upgrade(ws, "Replayed");
    await standin.endPeriod(sub); // a renewal: invoice.paid and subscription.updated
    const paid = standin
      .deliveries()
      .filter((d) => d.type === "invoice.paid")
      .pop();
    expect(paid?.status).toBe(200);
    await stripe.subscriptions.cancel(sub);
    expect(await planOf(ws.id)).toBe("starter");
    const before = await eventCount();
    const created = standin.deliveries().find((d) => d.type === "customer.subscription.created");
    expect(await standin.redeliver(paid?.id as string)).toBe(400);
    expect(await standin.redeliver(created?.id as string)).toBe(400);
    expect(await eventCount()).toBe(before);
    expect(await planOf(ws.id)).toBe("starter");
  });

  it("never changes an Enterprise workspace's plan (an operator's)", async () => {
    const made = await createWorkspace(pool(), { name: "Big Co", plan: "enterprise" });
    const sub = await upgrade({ id: made.workspace.id }, "Big Co");
    expect(await planOf(made.workspace.id)).toBe("enterprise");
    await stripe.subscriptions.cancel(sub);
    expect(await planOf(made.workspace.id)).toBe("enterprise");
  });
});
