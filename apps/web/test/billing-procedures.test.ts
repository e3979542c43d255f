// The billing procedures with Stripe configured (the stand-in, the real SDK) against a real
// cell whose webhook route receives the stand-in's events: a billing admin's checkout turns a
// Starter workspace into Pro; the summary then shows the subscription, the first invoice and a
// projection; a second checkout, an Enterprise checkout and a portal without a customer are
// refused with reasons. (Who may call them: procedures.test.ts, from PERMISSIONS.)
import { randomBytes } from "node:crypto";
import * as PrimBilling from "@prim/billing";
import { type StripeStandIn, startStripeStandIn } from "@prim/billing/standin";
import { createUser, createWorkspace } from "@prim/db";
import { startCloud, type TestCloud } from "@prim/testkit/cloud";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerWith, type TestContext, testContext } from "./trpc-caller";

const SECRET = randomBytes(24).toString("hex");
const WEBHOOK_SECRET = "whsec_procedures";
let standin: StripeStandIn;
let cloud: TestCloud;
let pool: pg.Pool;
let context: TestContext;

beforeAll(async () => {
  standin = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  cloud = await startCloud(
    "webbilling",
    {
      PRIM_INTERNAL_SECRET: SECRET,
      STRIPE_SECRET_KEY: "sk_test_web",
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: standin.url,
    },
    { billing: { intervalMs: 0 } },
  );
  standin.setWebhookUrl(`${cloud.url}/v1/billing/webhook`);
  const stripe = PrimBilling.createStripe({ secretKey: "sk_test_web", apiUrl: standin.url });
  await PrimBilling.syncStripe(stripe);
  pool = cloud.api.hub.pool as pg.Pool;
  const internal = cloud.internalUrl;
  context = testContext({
    pool,
    invoker: new RemoteInvoker({ url: internal, secret: SECRET }),
    mail: async () => {
      throw new Error("the billing procedures send no mail");
    },
    apiUrl: cloud.url,
    billing: { stripe, lib: PrimBilling },
  });
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
  await standin?.close();
});

async function billingAdmin(name: string, plan: "starter" | "enterprise" = "starter") {
  const ws = (await createWorkspace(pool, { name, plan })).workspace.id;
  const email = `billing-${randomBytes(3).toString("hex")}@${name.toLowerCase()}.test`;
  const user = await createUser(pool, { email, password: "password123", workspace: ws, role: "billing" });
  return { ws, caller: callerWith(context, { id: user.id, email }) };
}

describe("billing procedures with Stripe", () => {
  it("checkout to Pro: the summary shows the subscription, the invoice and the projection", async () => {
    const { ws, caller } = await billingAdmin("Growing");
    const before = await caller.billing.summary({ workspace: ws });
    expect(before).toMatchObject({
      workspace: { plan: "starter" },
      enabled: true,
      subscription: null,
      projection: null,
      invoices: [],
      included: { operations: 25_000_000 },
    });
    const { url } = await caller.billing.checkout({ workspace: ws });
    expect(url.startsWith(`${standin.url}/checkout/cs_test_`)).toBe(true);
    // The customer carries the workspace and the billing admin's address.
    const customer = await PrimBilling.customerOf(pool, ws);
    const stripeCustomer = await context.billing?.stripe.customers.retrieve(customer as string);
    expect(stripeCustomer).toMatchObject({ email: expect.stringMatching(/^billing-/), metadata: { workspace: ws } });

    await standin.completeCheckout(url.split("/").pop() as string);
    const after = await caller.billing.summary({ workspace: ws });
    expect(after).toMatchObject({
      workspace: { plan: "pro" },
      subscription: { status: "active", cancel_at_period_end: false, grace_until: null },
      projection: { totalCents: 0 },
      invoices: [{ status: "paid", amount_due: 2500, currency: "usd" }],
    });
    await expect(caller.billing.checkout({ workspace: ws })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("already on Pro"),
    });
    const portal = await caller.billing.portal({ workspace: ws });
    expect(portal.url.startsWith(`${standin.url}/portal/bps_`)).toBe(true);
  });

  it("refuses checkout for Enterprise and the portal before any billing account", async () => {
    const big = await billingAdmin("Enterprise", "enterprise");
    await expect(big.caller.billing.checkout({ workspace: big.ws })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("Enterprise"),
    });
    const fresh = await billingAdmin("Fresh");
    await expect(fresh.caller.billing.portal({ workspace: fresh.ws })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("upgrade first"),
    });
  });
});
