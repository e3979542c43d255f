import { invalid, notFound } from "@prim/engine";
import type pg from "pg";
import { countPrimitives } from "./workspaces.js";

/** Starter's caps (spec: Plans; Pro and Enterprise are never cut off): the limiter and the usage page. */
export const STARTER_CAPS = { operations: 1_000_000, storageBytes: 5 * 1024 ** 3, primitives: 100, groups: 1 } as const;

/**
 * A UTC month as `YYYY-MM`: the one form every reader of usage takes (`readUsage`, the live
 * counter's `Revocations.operations`). Made only by `usageMonth`, which checks it, so a
 * `"202611"` (the Redis counter's own key suffix) cannot reach a query that compares with
 * `to_char(day, 'YYYY-MM')` and silently match nothing.
 */
export type UsageMonth = string & { readonly __usageMonth: unique symbol };

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The UTC month of an instant (default now), or a `YYYY-MM` text checked (400 `invalid_request` otherwise). */
export function usageMonth(at: Date | number | string = Date.now()): UsageMonth {
  if (typeof at === "string") {
    if (!MONTH.test(at)) throw invalid(`month: expected YYYY-MM, got '${at}'`);
    return at as UsageMonth;
  }
  return new Date(at).toISOString().slice(0, 7) as UsageMonth;
}

/** The suffix of the limiter's Redis month counter (`YYYYMM`), for the one month form. */
export const counterMonth = (month: UsageMonth): string => checked(month).replace("-", "");

function checked(month: UsageMonth): UsageMonth {
  if (typeof month !== "string" || !MONTH.test(month)) throw invalid(`month: expected YYYY-MM, got '${month}'`);
  return month;
}

/** One workspace's figures for one UTC day (`YYYY-MM-DD`). */
export interface DayUsage {
  workspace: string;
  day: string;
  operations: number;
  storageBytes: number;
}

/**
 * Writes the minute's roll-up: the day's operation count as Redis has it (the latest figure
 * wins, so every process may write it) and the storage high-water mark.
 */
export async function rollUpUsage(pool: pg.Pool, rows: readonly DayUsage[]): Promise<void> {
  if (rows.length === 0) return;
  await pool.query(
    `INSERT INTO usage_daily (workspace_id, day, operations, storage_bytes)
     SELECT w, d::date, o, s FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS t(w, d, o, s)
     WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = t.w)
     ON CONFLICT (workspace_id, day) DO UPDATE SET
       operations = GREATEST(usage_daily.operations, EXCLUDED.operations),
       storage_bytes = GREATEST(usage_daily.storage_bytes, EXCLUDED.storage_bytes),
       updated_at = now()`,
    [
      rows.map((r) => r.workspace),
      rows.map((r) => r.day),
      rows.map((r) => r.operations),
      rows.map((r) => r.storageBytes),
    ],
  );
}

/** Operations one process counted on one primitive on one UTC day (`YYYY-MM-DD`) since its last roll-up. */
export interface PrimitiveDayUsage {
  workspace: string;
  day: string;
  primitive: string;
  operations: number;
}

/**
 * Adds a process's per-primitive counts to `usage_primitive_daily` (each process counts its own
 * calls in memory and adds them here every minute, so the rows are sums over processes).
 */
export async function addPrimitiveUsage(pool: pg.Pool, rows: readonly PrimitiveDayUsage[]): Promise<void> {
  if (rows.length === 0) return;
  await pool.query(
    `INSERT INTO usage_primitive_daily (workspace_id, day, primitive_id, operations)
     SELECT w, d::date, p, o FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(w, d, p, o)
     WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = t.w)
     ON CONFLICT (workspace_id, day, primitive_id) DO UPDATE SET
       operations = usage_primitive_daily.operations + EXCLUDED.operations,
       updated_at = now()`,
    [rows.map((r) => r.workspace), rows.map((r) => r.day), rows.map((r) => r.primitive), rows.map((r) => r.operations)],
  );
}

/** A primitive's operations this month (`name`, `type`, `group` null once it is deleted). */
export interface PrimitiveUsage {
  id: string;
  name: string | null;
  type: string | null;
  group: string | null;
  operations: number;
}

export interface UsageReport {
  workspace: { id: string; name: string; plan: string };
  /** The UTC month (`YYYY-MM`) the figures are for. */
  month: UsageMonth;
  /** Operations this month: the live Redis counter when given, else the days' roll-up. */
  operations: number;
  /** The month's storage high-water mark, bytes. */
  storage_bytes: number;
  days: { day: string; operations: number; storage_bytes: number }[];
  /** The primitives the workspace holds now (Starter's cap counts them). */
  primitives: number;
  /** The month's busiest primitives by operations (the minute's roll-up), at most `top` of them. */
  top_primitives: PrimitiveUsage[];
}

/**
 * `prim admin usage`, the usage and billing pages: the month's days from `usage_daily`, with the
 * live count if there is one, and the busiest primitives from `usage_primitive_daily`.
 */
export async function readUsage(
  pool: pg.Pool,
  workspace: string,
  options: { month: UsageMonth; liveOperations?: number | null; top?: number },
): Promise<UsageReport> {
  const month = checked(options.month);
  const ws = await pool.query<{ id: string; name: string; plan: string }>(
    "SELECT id, name, plan FROM workspaces WHERE id = $1",
    [workspace],
  );
  if (ws.rows[0] === undefined) throw notFound(`workspace '${workspace}'`);
  // The month's first day and the next month's: a range the primary keys' index serves.
  const first = `${month}-01`;
  const { rows } = await pool.query<{ day: string; operations: string; storage_bytes: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, operations, storage_bytes FROM usage_daily
     WHERE workspace_id = $1 AND day >= $2::date AND day < ($2::date + interval '1 month')
     ORDER BY day`,
    [workspace, first],
  );
  const top = await pool.query<{
    id: string;
    name: string | null;
    type: string | null;
    group: string | null;
    operations: string;
  }>(
    `SELECT u.primitive_id AS id, p.name, p.type, g.name AS "group", sum(u.operations) AS operations
     FROM usage_primitive_daily u
     LEFT JOIN primitives p ON p.id = u.primitive_id AND p.workspace_id = u.workspace_id
     LEFT JOIN groups g ON g.id = p.group_id
     WHERE u.workspace_id = $1 AND u.day >= $2::date AND u.day < ($2::date + interval '1 month')
     GROUP BY u.primitive_id, p.name, p.type, g.name
     ORDER BY sum(u.operations) DESC, u.primitive_id
     LIMIT $3`,
    [workspace, first, options.top ?? 10],
  );
  const days = rows.map((r) => ({
    day: r.day,
    operations: Number(r.operations),
    storage_bytes: Number(r.storage_bytes),
  }));
  const rolledUp = days.reduce((sum, d) => sum + d.operations, 0);
  return {
    workspace: ws.rows[0],
    month,
    operations: Math.max(rolledUp, options.liveOperations ?? 0),
    storage_bytes: days.reduce((max, d) => Math.max(max, d.storage_bytes), 0),
    days,
    primitives: await countPrimitives(pool, workspace),
    top_primitives: top.rows.map((r) => ({ ...r, operations: Number(r.operations) })),
  };
}
