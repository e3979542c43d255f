/**
 * Pro's prices and the Stripe objects that carry them (spec: Plans; CLOUD.md, "Billing"). The
 * spec sets the overage rates; the monthly base fee is ours to set and lives here with them.
 * `prim admin stripe sync` creates exactly these in Stripe (by lookup key and event name).
 */
export const PRO = {
  product: { name: "Prim Pro", metadata: { prim_plan: "pro" } },
  /** The monthly subscription fee, in cents (the spec names none). */
  baseCents: 2500,
  /** Operations included each calendar month (UTC), and the overage rate: $0.50 per 1M. */
  includedOperations: 25_000_000,
  /** Cents per operation past the included ones ($0.50 / 1M). */
  operationCentsDecimal: "0.00005",
  /** Storage included, bytes (50 GB, counted in GiB as the Starter cap is). */
  includedStorageBytes: 50 * 1024 ** 3,
  /** Storage is reported in thousandths of a GB-month; $0.25 per GB-month = 0.025 cents each. */
  storageMilliGbMonthCentsDecimal: "0.025",
} as const;

/** Lookup keys of the prices `stripe sync` keeps (a changed amount moves the key to a new price). */
export const PRICE_KEYS = {
  base: "prim_pro_base_monthly",
  operations: "prim_pro_operations_overage",
  storage: "prim_pro_storage_overage",
} as const;

/** Billing Meters (sum of the event values per period). */
export const METERS = {
  operations: { event_name: "prim_operations_overage", display_name: "Prim operations over the included 25M" },
  storage: {
    event_name: "prim_storage_overage_milli_gb_months",
    display_name: "Prim storage over the included 50 GB (thousandths of a GB-month)",
  },
} as const;

export type MeterName = keyof typeof METERS;

/**
 * What each plan includes, as the dashboard's billing page lists it (spec: Plans and
 * Enforcement; issue 42: Starter gets the change feeds, Pro gets webhooks).
 */
export const PLAN_FEATURES = {
  starter: [
    "1M operations a month, 5 GB of storage and 100 primitives, as hard caps (never billed)",
    "One group",
    "Change feeds: REST, SSE, the SDK and MCP",
  ],
  pro: [
    "25M operations and 50 GB a month included, then $0.50 per extra 1M and $0.25 per GB-month",
    "Unlimited primitives and groups",
    "Snapshots, restore and fork",
    "The audit log (30 days)",
    "Change feeds and webhooks",
  ],
  enterprise: ["Everything in Pro", "Custom limits, rates and terms"],
} as const;

/** How long Pro is kept after a failed payment before the workspace falls back to Starter. */
export const GRACE_DAYS = 14;

/** Stripe subscription statuses that keep a workspace on Pro (`past_due` is the grace state). */
export const PRO_STATUSES: ReadonlySet<string> = new Set(["active", "trialing", "past_due"]);

/** Statuses that end Pro (the workspace returns to Starter's limits; nothing is deleted). */
export const ENDED_STATUSES: ReadonlySet<string> = new Set(["canceled", "unpaid", "incomplete_expired"]);
