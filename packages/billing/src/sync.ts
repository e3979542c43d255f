import Stripe from "stripe";
import { METERS, type MeterName, PRICE_KEYS, PRO } from "./plans.js";

export interface SyncResult {
  product: string;
  meters: Record<MeterName, string>;
  prices: Record<keyof typeof PRICE_KEYS, string>;
  /** What this run created (empty on a rerun with nothing changed). */
  created: string[];
}

/**
 * `prim admin stripe sync`: makes Stripe hold Pro's product, its Billing Meters and its three
 * prices as `plans.ts` sets them. Idempotent: objects are found by metadata, event name and
 * lookup key; a price whose amount changed is replaced (the lookup key moves to the new one,
 * the old one is deactivated). Creations carry idempotency keys derived from what they create.
 */
export async function syncStripe(stripe: Stripe): Promise<SyncResult> {
  const created: string[] = [];
  let product = (await stripe.products.list({ active: true, limit: 100 })).data.find(
    (p) => p.metadata?.prim_plan === PRO.product.metadata.prim_plan,
  );
  if (product === undefined) {
    product = await stripe.products.create(
      { name: PRO.product.name, metadata: { ...PRO.product.metadata } },
      { idempotencyKey: "prim-sync-product-pro" },
    );
    created.push(product.id);
  }

  const activeMeters = (await stripe.billing.meters.list({ status: "active", limit: 100 })).data;
  const meters = {} as Record<MeterName, string>;
  for (const name of Object.keys(METERS) as MeterName[]) {
    const spec = METERS[name];
    let meter = activeMeters.find((m) => m.event_name === spec.event_name);
    if (meter === undefined) {
      meter = await stripe.billing.meters.create(
        {
          display_name: spec.display_name,
          event_name: spec.event_name,
          default_aggregation: { formula: "sum" },
          customer_mapping: { event_payload_key: "stripe_customer_id", type: "by_id" },
          value_settings: { event_payload_key: "value" },
        },
        { idempotencyKey: `prim-sync-meter-${spec.event_name}` },
      );
      created.push(meter.id);
    }
    meters[name] = meter.id;
  }

  const wanted: Record<keyof typeof PRICE_KEYS, Stripe.PriceCreateParams> = {
    base: {
      product: product.id,
      currency: "usd",
      unit_amount: PRO.baseCents,
      recurring: { interval: "month", usage_type: "licensed" },
      nickname: "Pro monthly",
    },
    operations: {
      product: product.id,
      currency: "usd",
      unit_amount_decimal: Stripe.Decimal.from(PRO.operationCentsDecimal),
      recurring: { interval: "month", usage_type: "metered", meter: meters.operations },
      nickname: "Pro operations over 25M",
    },
    storage: {
      product: product.id,
      currency: "usd",
      unit_amount_decimal: Stripe.Decimal.from(PRO.storageMilliGbMonthCentsDecimal),
      recurring: { interval: "month", usage_type: "metered", meter: meters.storage },
      nickname: "Pro storage over 50 GB",
    },
  };
  const existing = (await stripe.prices.list({ lookup_keys: Object.values(PRICE_KEYS), active: true, limit: 100 }))
    .data;
  const prices = {} as Record<keyof typeof PRICE_KEYS, string>;
  for (const name of Object.keys(PRICE_KEYS) as (keyof typeof PRICE_KEYS)[]) {
    const lookupKey = PRICE_KEYS[name];
    const want = wanted[name];
    const have = existing.find((p) => p.lookup_key === lookupKey);
    if (have !== undefined && samePrice(have, want)) {
      prices[name] = have.id;
      continue;
    }
    const amount = want.unit_amount ?? String(want.unit_amount_decimal);
    const price = await stripe.prices.create(
      { ...want, lookup_key: lookupKey, transfer_lookup_key: have !== undefined },
      { idempotencyKey: `prim-sync-price-${lookupKey}-${amount}-${want.recurring?.meter ?? ""}` },
    );
    if (have !== undefined) await stripe.prices.update(have.id, { active: false });
    created.push(price.id);
    prices[name] = price.id;
  }
  return { product: product.id, meters, prices, created };
}

function samePrice(have: Stripe.Price, want: Stripe.PriceCreateParams): boolean {
  const amount = (p: { unit_amount?: number | null; unit_amount_decimal?: unknown }) =>
    p.unit_amount_decimal != null ? Number(String(p.unit_amount_decimal)) : Number(p.unit_amount);
  return (
    have.product === want.product &&
    have.currency === want.currency &&
    amount(have) === amount(want) &&
    have.recurring?.usage_type === want.recurring?.usage_type &&
    (have.recurring?.meter ?? null) === (want.recurring?.meter ?? null)
  );
}
