export { createStripe, type Stripe, type StripeConfig, stripeEnv } from "./client.js";
export {
  checkoutSession,
  customerOf,
  ensureCustomer,
  type InvoiceSummary,
  invoicesOf,
  portalSession,
  proPrices,
} from "./customers.js";
export { BILLING_LOCK, type BillingJobDeps, type BillingRun, runBillingOnce, startBillingJob } from "./job.js";
export {
  type DayFigures,
  planDays,
  planMeterEvents,
  SETTLE_MS,
  type SendHooks,
  sendMeterEvents,
  storageOverageMilli,
  WINDOW_DAYS,
} from "./overage.js";
export {
  ENDED_STATUSES,
  GRACE_DAYS,
  METERS,
  type MeterName,
  PLAN_FEATURES,
  PRICE_KEYS,
  PRO,
  PRO_STATUSES,
} from "./plans.js";
export { type Projection, projectOverage } from "./projection.js";
export { applySubscription, cancelForDeletion } from "./subscriptions.js";
export { type SyncResult, syncStripe } from "./sync.js";
export { handleWebhook, SIGNATURE_TOLERANCE_S, type WebhookDeps } from "./webhooks.js";
