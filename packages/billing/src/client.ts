import Stripe from "stripe";
import { z } from "zod";

/** The Stripe settings every app with billing reads (CLOUD.md, Processes). */
export const stripeEnv = {
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** A Stripe stand-in's address (tests and local development); unset = api.stripe.com. */
  STRIPE_API_URL: z
    .string()
    .refine((v) => URL.canParse(v), { message: "STRIPE_API_URL must be a URL" })
    .optional(),
};

export interface StripeConfig {
  secretKey: string;
  apiUrl?: string;
  /** Retries of failed calls (the SDK's own, with its idempotency keys); default 2. */
  maxNetworkRetries?: number;
}

/** The official SDK, pointed at `apiUrl` when one is given (the stand-in speaks plain HTTP). */
export function createStripe(config: StripeConfig): Stripe {
  const options: NonNullable<ConstructorParameters<typeof Stripe>[1]> = {
    maxNetworkRetries: config.maxNetworkRetries ?? 2,
    timeout: 20_000,
    appInfo: { name: "prim" },
  };
  if (config.apiUrl !== undefined) {
    const url = new URL(config.apiUrl);
    options.host = url.hostname;
    options.port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    options.protocol = url.protocol === "https:" ? "https" : "http";
  }
  return new Stripe(config.secretKey, options);
}

export type { Stripe };
