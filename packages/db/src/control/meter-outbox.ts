import type pg from "pg";
import { inTransaction } from "../connect.js";

/**
 * Pro overage's outbox (CLOUD.md, "Billing (Stripe)"): one row per workspace, meter and day,
 * planned by @prim/billing from `usage_daily` and sent to Stripe Billing Meters with the row's
 * `identifier` as idempotency key.
 */

type Queryable = Pick<pg.ClientBase, "query">;

/** Pro workspaces with a Stripe customer (those whose overage is metered). */
export async function meteredWorkspaces(pool: pg.Pool): Promise<{ id: string; customer: string }[]> {
  const { rows } = await pool.query<{ id: string; customer: string }>(
    `SELECT w.id, c.stripe_customer_id AS customer FROM workspaces w
       JOIN billing_customers c ON c.workspace_id = w.id
      WHERE w.plan = 'pro'`,
  );
  return rows;
}

export interface OutboxPlanInput {
  /** Days `monthStart`..`lastDay` of `usage_daily`, and the last day before `monthStart` (its storage carries over). */
  usage: { day: string; operations: number; storageBytes: number }[];
  /** The outbox rows already planned since `monthStart` (locked until the transaction ends). */
  done: { meter: string; day: string; value: number }[];
}

export interface OutboxRow {
  meter: string;
  day: string;
  value: number;
}

/**
 * Plans one workspace's rows in one transaction: `plan` gets its usage and planned rows (locked)
 * and answers the rows to add; a row with value 0 is written as sent (nothing to send).
 */
export async function planOutbox(
  pool: pg.Pool,
  input: { workspace: string; customer: string; monthStart: string; lastDay: string; now: Date },
  plan: (figures: OutboxPlanInput) => OutboxRow[],
): Promise<number> {
  return inTransaction(pool, async (db) => {
    const usage = await db.query<{ day: string; operations: string; storage_bytes: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, operations, storage_bytes FROM usage_daily
        WHERE workspace_id = $1 AND day <= $3::date
          AND (day >= $2::date OR day = (SELECT max(day) FROM usage_daily WHERE workspace_id = $1 AND day < $2::date))
        ORDER BY day`,
      [input.workspace, input.monthStart, input.lastDay],
    );
    const done = await db.query<{ meter: string; day: string; value: string }>(
      `SELECT meter, to_char(day, 'YYYY-MM-DD') AS day, value FROM meter_outbox
        WHERE workspace_id = $1 AND day >= $2::date FOR UPDATE`,
      [input.workspace, input.monthStart],
    );
    const rows = plan({
      usage: usage.rows.map((r) => ({
        day: r.day,
        operations: Number(r.operations),
        storageBytes: Number(r.storage_bytes),
      })),
      done: done.rows.map((r) => ({ meter: r.meter, day: r.day, value: Number(r.value) })),
    });
    for (const row of rows) {
      await db.query(
        `INSERT INTO meter_outbox (identifier, workspace_id, meter, day, value, customer, next_attempt_at, sent_at)
         VALUES ($1, $2, $3, $4::date, $5::bigint, $6, $7::timestamptz, CASE WHEN $5::bigint = 0 THEN $7::timestamptz END)
         ON CONFLICT DO NOTHING`,
        [
          `prim-${row.meter}-${input.workspace}-${row.day}`,
          input.workspace,
          row.meter,
          row.day,
          row.value,
          input.customer,
          input.now,
        ],
      );
    }
    return rows.length;
  });
}

export interface DueRow {
  identifier: string;
  meter: string;
  day: string;
  value: string;
  customer: string;
  attempts: number;
}

/** Rows not yet sent whose next attempt is due, oldest day first (at most 1000). */
export async function dueOutboxRows(db: Queryable, now: Date): Promise<DueRow[]> {
  const { rows } = await db.query<DueRow>(
    `SELECT identifier, meter, to_char(day, 'YYYY-MM-DD') AS day, value, customer, attempts FROM meter_outbox
      WHERE sent_at IS NULL AND next_attempt_at <= $1 ORDER BY day, meter LIMIT 1000`,
    [now],
  );
  return rows;
}

/** A failed send: tried again after `delayMs`. */
export async function outboxFailed(
  db: Queryable,
  input: { identifier: string; error: string; now: Date; delayMs: number },
): Promise<void> {
  await db.query(
    `UPDATE meter_outbox SET attempts = attempts + 1, last_error = $2,
       next_attempt_at = $3::timestamptz + make_interval(secs => $4) WHERE identifier = $1`,
    [input.identifier, input.error.slice(0, 500), input.now, input.delayMs / 1000],
  );
}

/** Stripe took the row's event. */
export async function outboxSent(db: Queryable, identifier: string, now: Date): Promise<void> {
  await db.query("UPDATE meter_outbox SET sent_at = $2, last_error = NULL WHERE identifier = $1", [identifier, now]);
}
