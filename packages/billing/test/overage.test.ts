// The overage job against Postgres and the Stripe stand-in (the real SDK): a month of synthetic
// usage for a Pro workspace becomes meter events whose sum is the overage computed by hand,
// with a crash between Stripe's answer and the outbox's record and a rerun (nothing counted
// twice), a Stripe error leaving rows for a later run with backoff, and one leader at a time.
import { createWorkspace, migrate, openPool } from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BILLING_LOCK,
  createStripe,
  ensureCustomer,
  PRO,
  runBillingOnce,
  type Stripe,
  storageOverageMilli,
  syncStripe,
} from "../src/index.js";
import { type StripeStandIn, startStripeStandIn } from "../src/standin/index.js";

const GIB = 1024 ** 3;
const M = 1_000_000;
/** 1 November 2026, 01:00 UTC: October is complete and within Stripe's 35 days. */
const NOW = new Date("2026-11-01T01:00:00Z");
const db = freshDatabase("overage");
let pool: pg.Pool;
let standin: StripeStandIn;
let stripe: Stripe;

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  pool = await openPool(db.url);
  standin = await startStripeStandIn({ webhookSecret: "whsec_unused", now: () => Math.floor(NOW.getTime() / 1000) });
  stripe = createStripe({ secretKey: "sk_test_overage", apiUrl: standin.url, maxNetworkRetries: 0 });
  await syncStripe(stripe);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await standin?.close();
  await db.drop();
});

/** A Pro workspace with a Stripe customer and October's usage (31 days). */
async function proWithOctober(name: string, day: (d: number) => { operations: number; storage: number }) {
  const ws = (await createWorkspace(pool, { name, plan: "pro" })).workspace.id;
  const customer = await ensureCustomer(pool, stripe, { id: ws, name });
  for (let d = 1; d <= 31; d++) {
    const { operations, storage } = day(d);
    await pool.query(
      "INSERT INTO usage_daily (workspace_id, day, operations, storage_bytes) VALUES ($1, $2::date, $3, $4)",
      [ws, `2026-10-${String(d).padStart(2, "0")}`, operations, storage],
    );
  }
  return { ws, customer };
}

const sumFor = (customer: string, meter: "operations" | "storage") =>
  standin
    .meterEvents()
    .filter((e) => e.customer === customer && e.event_name.includes(meter === "operations" ? "operations" : "storage"))
    .reduce((sum, e) => sum + e.value, 0);

describe("the overage job", () => {
  it("reports a month's overage exactly once across a crash and a rerun", async () => {
    // 1.2M operations a day (37.2M: 12.2M over); storage 45 GiB rising 0.5 GiB a day.
    const usage = (d: number) => ({ operations: 1_200_000, storage: 45 * GIB + (d - 1) * 0.5 * GIB });
    const { ws, customer } = await proWithOctober("Heavy", usage);
    const opsByHand = 31 * 1_200_000 - PRO.includedOperations; // 12.2M
    let storageByHand = 0;
    for (let d = 1; d <= 31; d++) storageByHand += storageOverageMilli(usage(d).storage, "2026-10-01");

    // The first run dies after Stripe accepted its 20th event, before recording it as sent.
    let accepted = 0;
    let crashed = "";
    const crash = runBillingOnce({
      pool,
      stripe,
      now: () => NOW,
      onPlanChanged: async () => {},
      hooks: {
        afterSend: (identifier) => {
          if (++accepted === 20) {
            crashed = identifier;
            throw new Error("process killed");
          }
        },
      },
    });
    await expect(crash).rejects.toThrow("process killed");
    const pending = await pool.query(
      "SELECT count(*)::int AS n FROM meter_outbox WHERE workspace_id = $1 AND sent_at IS NULL",
      [ws],
    );
    expect(pending.rows[0]?.n).toBeGreaterThan(0);

    const rerun = await runBillingOnce({ pool, stripe, now: () => NOW, onPlanChanged: async () => {} });
    expect(rerun?.planned).toBe(0); // every day was planned by the first run
    expect(rerun?.failed).toBe(0);
    // The 20th event went to Stripe twice (same identifier and idempotency key): counted once.
    expect(crashed).toMatch(/^prim-(operations|storage)-/);
    expect(standin.meterEvents().filter((e) => e.identifier === crashed)).toHaveLength(1);
    expect(sumFor(customer, "operations")).toBe(opsByHand);
    expect(sumFor(customer, "storage")).toBe(storageByHand);
    const left = await pool.query(
      "SELECT count(*)::int AS n FROM meter_outbox WHERE workspace_id = $1 AND sent_at IS NULL",
      [ws],
    );
    expect(left.rows[0]?.n).toBe(0);

    // A third run has nothing to send.
    const again = await runBillingOnce({ pool, stripe, now: () => NOW, onPlanChanged: async () => {} });
    expect(again).toMatchObject({ planned: 0, sent: 0, failed: 0 });
    expect(sumFor(customer, "operations")).toBe(opsByHand);
  });

  it("leaves rows Stripe refused for a later run, backing off", async () => {
    const { ws, customer } = await proWithOctober("Unlucky", () => ({ operations: 2 * M, storage: 10 * GIB }));
    standin.failNext(1000, 500);
    const failed = await runBillingOnce({ pool, stripe, now: () => NOW, onPlanChanged: async () => {} });
    standin.failNext(0);
    expect(failed?.failed).toBeGreaterThan(0);
    const rows = await pool.query<{ attempts: number; last_error: string; next_attempt_at: Date }>(
      "SELECT attempts, last_error, next_attempt_at FROM meter_outbox WHERE workspace_id = $1 AND sent_at IS NULL",
      [ws],
    );
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const row of rows.rows) {
      expect(row.attempts).toBe(1);
      expect(row.next_attempt_at.getTime()).toBe(NOW.getTime() + 60_000);
    }
    // Before the backoff ends nothing is sent; after it, everything.
    const early = await runBillingOnce({ pool, stripe, now: () => NOW, onPlanChanged: async () => {} });
    expect(early?.sent).toBe(0);
    const later = new Date(NOW.getTime() + 61_000);
    const retried = await runBillingOnce({ pool, stripe, now: () => later, onPlanChanged: async () => {} });
    expect(retried?.failed).toBe(0);
    expect(sumFor(customer, "operations")).toBe(31 * 2 * M - PRO.includedOperations);
  });

  it("runs in one process at a time (the advisory lock)", async () => {
    const holder = await pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1)", [BILLING_LOCK]);
      expect(await runBillingOnce({ pool, stripe, now: () => NOW, onPlanChanged: async () => {} })).toBeNull();
    } finally {
      await holder.query("SELECT pg_advisory_unlock($1)", [BILLING_LOCK]);
      holder.release();
    }
  });

  it("reports nothing for Starter workspaces", async () => {
    const ws = (await createWorkspace(pool, { name: "Free", plan: "starter" })).workspace.id;
    await ensureCustomer(pool, stripe, { id: ws, name: "Free" });
    await pool.query("INSERT INTO usage_daily (workspace_id, day, operations) VALUES ($1, '2026-10-05', 900000)", [ws]);
    await runBillingOnce({ pool, stripe, now: () => NOW, onPlanChanged: async () => {} });
    expect((await pool.query("SELECT 1 FROM meter_outbox WHERE workspace_id = $1", [ws])).rowCount).toBe(0);
  });
});
