import { createStripe, handleWebhook, type SendHooks, type Stripe, startBillingJob } from "@prim/billing";
import type { Revocations } from "@prim/db";
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import type { ApiEnv } from "./env.js";

/** Where Stripe posts its events (CLOUD.md, "Billing"). No Bearer credential: the signature is the proof. */
export const WEBHOOK_PATH = "/v1/billing/webhook";

export interface BillingOptions {
  /** How often the overage job runs (default 5 min); 0 = never on its own (tests run it). */
  intervalMs?: number;
  now?: () => Date;
  hooks?: SendHooks;
}

export interface ApiBilling {
  stripe: Stripe;
  stop(): Promise<void>;
}

/**
 * Billing on the api, with `STRIPE_SECRET_KEY` set: the webhook route (with
 * `STRIPE_WEBHOOK_SECRET`), verified on the raw body, and the overage job (one leader at a
 * time across processes, through a Postgres advisory lock). A plan change drops the
 * workspace's cached plan in Redis, so caps lift or apply on the next request.
 */
export function mountBilling(
  app: FastifyInstance,
  env: ApiEnv,
  deps: { pool: pg.Pool; revocations: Revocations },
  options: BillingOptions = {},
): ApiBilling | undefined {
  if (env.STRIPE_SECRET_KEY === undefined) return undefined;
  const stripe = createStripe({ secretKey: env.STRIPE_SECRET_KEY, apiUrl: env.STRIPE_API_URL });
  const onPlanChanged = (workspace: string) => deps.revocations.planChanged(workspace);
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET;
  if (webhookSecret !== undefined) {
    app.register(async (raw) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
      raw.post(WEBHOOK_PATH, async (req) => {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const signature = req.headers["stripe-signature"];
        const handled = await handleWebhook(
          { pool: deps.pool, stripe, webhookSecret, onPlanChanged, now: options.now },
          body,
          typeof signature === "string" ? signature : undefined,
        );
        return { received: true, id: handled.id, type: handled.type };
      });
    });
  }
  const job =
    options.intervalMs === 0
      ? undefined
      : startBillingJob(
          { pool: deps.pool, stripe, onPlanChanged, now: options.now, hooks: options.hooks },
          { intervalMs: options.intervalMs },
        );
  return { stripe, stop: async () => await job?.stop() };
}
