import { expireGrace, withBillingLock } from "@prim/db";
import type pg from "pg";
import type Stripe from "stripe";
import { planMeterEvents, type SendHooks, sendMeterEvents } from "./overage.js";
import { tellPlanChanged } from "./webhooks.js";

/** The advisory lock that makes one process at a time the billing job's leader. */
export const BILLING_LOCK = 7_146_093_271;

export interface BillingJobDeps {
  pool: pg.Pool;
  stripe: Stripe;
  /** Tells every process a workspace's plan changed (drops the cached plan). */
  onPlanChanged(workspace: string): Promise<void>;
  now?: () => Date;
  hooks?: SendHooks;
}

export interface BillingRun {
  planned: number;
  sent: number;
  failed: number;
  /** Workspaces returned to Starter because their grace period ran out unpaid. */
  demoted: string[];
}

/**
 * One run of the billing job, if this process gets the lock (else null: another process is
 * the leader right now): expired grace periods end (audited `plan.change`, actor `billing`),
 * completed days' meter events are planned into the outbox, due rows are sent to Stripe.
 */
export async function runBillingOnce(deps: BillingJobDeps): Promise<BillingRun | null> {
  return withBillingLock(deps.pool, BILLING_LOCK, async () => {
    const now = deps.now?.() ?? new Date();
    const demoted = await expireGrace(deps.pool, now);
    await tellPlanChanged(deps.onPlanChanged, demoted);
    const planned = await planMeterEvents(deps.pool, now);
    const { sent, failed } = await sendMeterEvents(deps.pool, deps.stripe, now, deps.hooks);
    return { planned, sent, failed, demoted };
  });
}

/** Runs the job every `intervalMs` (default 5 min) until stopped; a failed run is logged and retried next time. */
export function startBillingJob(
  deps: BillingJobDeps,
  options: { intervalMs?: number; log?: (line: string) => void } = {},
): { stop(): Promise<void> } {
  const log = options.log ?? ((line: string) => console.warn(line));
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    running = runBillingOnce(deps).catch((err: Error) => log(`billing job: ${err.message}`));
  };
  const timer = setInterval(tick, options.intervalMs ?? 300_000);
  timer.unref();
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
