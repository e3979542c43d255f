import { dueOutboxRows, meteredWorkspaces, outboxFailed, outboxSent, planOutbox } from "@prim/db";
import type pg from "pg";
import type Stripe from "stripe";
import { METERS, type MeterName, PRO } from "./plans.js";

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;
/** A day is reported once it has been over this long (the last roll-ups of the day have landed). */
export const SETTLE_MS = 30 * 60_000;
/** Stripe takes meter events up to 35 days old; days older than this are left out. */
export const WINDOW_DAYS = 34;

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
const daysInMonth = (day: string) =>
  new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)), 0)).getUTCDate();

/** One day's meter values (pure; the test computes the same by hand). */
export interface DayFigures {
  day: string;
  operations: number;
  /** The storage high-water mark of the day (carried forward over days without a row). */
  storageBytes: number;
}

/** Thousandths of a GB-month over the included 50 GB, for one day of a month. */
export function storageOverageMilli(bytes: number, day: string): number {
  const over = Math.max(0, bytes - PRO.includedStorageBytes);
  return Math.round(((over / GIB) * 1000) / daysInMonth(day));
}

/**
 * Plans the meter events of every completed day (UTC) of Pro workspaces with a Stripe
 * customer, one outbox row per workspace, meter and day, in one transaction per workspace:
 * - operations: the month's overage so far (operations through the day past 25M) minus what
 *   earlier days of the month already reported — so each day carries its increment, and the
 *   month's rows sum to its overage;
 * - storage: the day's high-water mark over 50 GB as thousandths of a GB-month (1/days of the
 *   month per day).
 * A row with value 0 is written as sent (nothing to send; the day is done). Rows are never
 * recomputed: a rerun plans only days without a row, so it sends nothing twice.
 */
export async function planMeterEvents(pool: pg.Pool, now: Date): Promise<number> {
  const lastDay = isoDay(now.getTime() - SETTLE_MS - DAY_MS);
  const firstDay = isoDay(now.getTime() - WINDOW_DAYS * DAY_MS);
  if (lastDay < firstDay) return 0;
  const monthStart = `${firstDay.slice(0, 7)}-01`;
  let planned = 0;
  for (const ws of await meteredWorkspaces(pool)) {
    planned += await planOutbox(
      pool,
      { workspace: ws.id, customer: ws.customer, monthStart, lastDay, now },
      ({ usage, done }) =>
        planDays(usage, done as { meter: MeterName; day: string; value: number }[], monthStart, firstDay, lastDay),
    );
  }
  return planned;
}

/** The rows to add for days `firstDay`..`lastDay` without one (pure). */
export function planDays(
  usage: readonly DayFigures[],
  done: readonly { meter: MeterName; day: string; value: number }[],
  monthStart: string,
  firstDay: string,
  lastDay: string,
): { meter: MeterName; day: string; value: number }[] {
  const byDay = new Map(usage.map((u) => [u.day, u]));
  const doneKey = new Map(done.map((d) => [`${d.meter}:${d.day}`, d.value]));
  const out: { meter: MeterName; day: string; value: number }[] = [];
  let month = "";
  let cumulative = 0;
  let reported = 0;
  let storage = usage.find((u) => u.day < monthStart)?.storageBytes ?? 0;
  for (let t = dayMs(monthStart); t <= dayMs(lastDay); t += DAY_MS) {
    const day = isoDay(t);
    if (day.slice(0, 7) !== month) {
      month = day.slice(0, 7);
      cumulative = 0;
      reported = 0;
    }
    const figures = byDay.get(day);
    cumulative += figures?.operations ?? 0;
    if (figures !== undefined) storage = figures.storageBytes;
    const opsDone = doneKey.get(`operations:${day}`);
    if (opsDone !== undefined) reported += opsDone;
    else if (day >= firstDay) {
      const value = Math.max(0, Math.max(0, cumulative - PRO.includedOperations) - reported);
      reported += value;
      out.push({ meter: "operations", day, value });
    }
    if (day >= firstDay && !doneKey.has(`storage:${day}`)) {
      out.push({ meter: "storage", day, value: storageOverageMilli(storage, day) });
    }
  }
  return out;
}

export interface SendHooks {
  /** Tests: runs after Stripe accepted an event and before the row is marked sent (a crash point). */
  afterSend?(identifier: string): void | Promise<void>;
}

/**
 * Sends the outbox's due rows as Billing Meter events (`identifier` and the idempotency key
 * are the row's identifier, so a resend after a crash is not counted twice). A failure leaves
 * the row for a later run, backing off 1 min × 2^attempts up to 6 h.
 */
export async function sendMeterEvents(
  pool: pg.Pool,
  stripe: Stripe,
  now: Date,
  hooks: SendHooks = {},
): Promise<{ sent: number; failed: number }> {
  const rows = await dueOutboxRows(pool, now);
  let sent = 0;
  let failed = 0;
  for (const row of rows) {
    try {
      await stripe.billing.meterEvents.create(
        {
          event_name: METERS[row.meter as MeterName].event_name,
          identifier: row.identifier,
          timestamp: Math.floor((dayMs(row.day) + DAY_MS) / 1000) - 1,
          payload: { stripe_customer_id: row.customer, value: row.value },
        },
        { idempotencyKey: row.identifier },
      );
    } catch (err) {
      failed++;
      const delayMs = Math.min(60_000 * 2 ** row.attempts, 6 * 3_600_000);
      await outboxFailed(pool, { identifier: row.identifier, error: (err as Error).message, now, delayMs });
      continue;
    }
    await hooks.afterSend?.(row.identifier);
    await outboxSent(pool, row.identifier, now);
    sent++;
  }
  return { sent, failed };
}
