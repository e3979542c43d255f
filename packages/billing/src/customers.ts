import { customerOf, saveCustomer } from "@prim/db";
import type pg from "pg";
import type Stripe from "stripe";
import { PRICE_KEYS } from "./plans.js";

/**
 * A workspace's Stripe customer, made on its first billing action. The idempotency key is the
 * workspace's, so two first actions at once make one customer; the row is written once.
 */
export async function ensureCustomer(
  pool: pg.Pool,
  stripe: Stripe,
  workspace: { id: string; name: string },
  email?: string,
): Promise<string> {
  const existing = await customerOf(pool, workspace.id);
  if (existing !== null) return existing;
  const customer = await stripe.customers.create(
    { name: workspace.name, ...(email === undefined ? {} : { email }), metadata: { workspace: workspace.id } },
    { idempotencyKey: `prim-customer-${workspace.id}` },
  );
  await saveCustomer(pool, workspace.id, customer.id);
  return (await customerOf(pool, workspace.id)) as string;
}

export { customerOf };

/** The prices `stripe sync` made, by lookup key (found once per process). */
let pricesCache: { stripe: Stripe; prices: Promise<Record<keyof typeof PRICE_KEYS, string>> } | null = null;
export function proPrices(stripe: Stripe): Promise<Record<keyof typeof PRICE_KEYS, string>> {
  if (pricesCache?.stripe !== stripe) {
    const prices = (async () => {
      const found = (await stripe.prices.list({ lookup_keys: Object.values(PRICE_KEYS), active: true, limit: 10 }))
        .data;
      const out = {} as Record<keyof typeof PRICE_KEYS, string>;
      for (const [name, key] of Object.entries(PRICE_KEYS) as [keyof typeof PRICE_KEYS, string][]) {
        const price = found.find((p) => p.lookup_key === key);
        if (price === undefined) throw new Error(`Stripe has no price '${key}': run \`npx prim admin stripe sync\``);
        out[name] = price.id;
      }
      return out;
    })();
    prices.catch(() => {
      pricesCache = null; // try again next time
    });
    pricesCache = { stripe, prices };
  }
  return pricesCache.prices;
}

/**
 * A Checkout Session for Pro: the monthly price and the two metered overage prices, back to
 * the dashboard's billing page. The workspace rides along as `client_reference_id` and in the
 * subscription's metadata (webhooks find it by either).
 */
export async function checkoutSession(
  stripe: Stripe,
  options: { customer: string; workspace: string; billingPageUrl: string; attempt: string },
): Promise<string> {
  const prices = await proPrices(stripe);
  const session = await stripe.checkout.sessions.create(
    {
      mode: "subscription",
      customer: options.customer,
      client_reference_id: options.workspace,
      line_items: [{ price: prices.base, quantity: 1 }, { price: prices.operations }, { price: prices.storage }],
      subscription_data: { metadata: { workspace: options.workspace } },
      metadata: { workspace: options.workspace },
      success_url: `${options.billingPageUrl}?checkout=success&session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${options.billingPageUrl}?checkout=cancel`,
    },
    { idempotencyKey: `prim-checkout-${options.workspace}-${options.attempt}` },
  );
  if (session.url === null) throw new Error("Stripe answered a checkout session without a URL");
  return session.url;
}

/** A Customer Portal session: payment method, cancel, invoices. */
export async function portalSession(stripe: Stripe, customer: string, returnUrl: string): Promise<string> {
  const session = await stripe.billingPortal.sessions.create({ customer, return_url: returnUrl });
  return session.url;
}

export interface InvoiceSummary {
  id: string;
  number: string | null;
  status: string | null;
  amount_due: number;
  amount_paid: number;
  currency: string;
  created: number;
  url: string | null;
}

/** The customer's latest invoices (newest first). */
export async function invoicesOf(stripe: Stripe, customer: string, limit = 12): Promise<InvoiceSummary[]> {
  const list = await stripe.invoices.list({ customer, limit });
  return list.data.map((i) => ({
    id: i.id as string,
    number: i.number ?? null,
    status: i.status ?? null,
    amount_due: i.amount_due,
    amount_paid: i.amount_paid,
    currency: i.currency,
    created: i.created,
    url: i.hosted_invoice_url ?? null,
  }));
}
