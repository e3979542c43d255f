import { notFound } from "@prim/engine";
import type pg from "pg";

/** One workspace's figures for one UTC day (`YYYY-MM-DD`). */
/** Starter's caps (spec: Plans; Pro and Enterprise are never cut off): the limiter and the usage page. */
export const STARTER_CAPS = { operations: 1_000_000, storageBytes: 5 * 1024 ** 3, primitives: 100, groups: 1 } as const;

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

export interface UsageReport {
  workspace: { id: string; name: string; plan: string };
  /** The UTC month (`YYYY-MM`) the figures are for. */
  month: string;
  /** Operations this month: the live Redis counter when given, else the days' roll-up. */
  operations: number;
  /** The month's storage high-water mark, bytes. */
  storage_bytes: number;
  days: { day: string; operations: number; storage_bytes: number }[];
}

/** `prim admin usage`: the month's days from `usage_daily`, with the live count if there is one. */
export async function readUsage(
  pool: pg.Pool,
  workspace: string,
  options: { month: string; liveOperations?: number | null },
): Promise<UsageReport> {
  const ws = await pool.query<{ id: string; name: string; plan: string }>(
    "SELECT id, name, plan FROM workspaces WHERE id = $1",
    [workspace],
  );
  if (ws.rows[0] === undefined) throw notFound(`workspace '${workspace}'`);
  const { rows } = await pool.query<{ day: string; operations: string; storage_bytes: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, operations, storage_bytes FROM usage_daily
     WHERE workspace_id = $1 AND to_char(day, 'YYYY-MM') = $2 ORDER BY day`,
    [workspace, options.month],
  );
  const days = rows.map((r) => ({
    day: r.day,
    operations: Number(r.operations),
    storage_bytes: Number(r.storage_bytes),
  }));
  const rolledUp = days.reduce((sum, d) => sum + d.operations, 0);
  return {
    workspace: ws.rows[0],
    month: options.month,
    operations: Math.max(rolledUp, options.liveOperations ?? 0),
    storage_bytes: days.reduce((max, d) => Math.max(max, d.storage_bytes), 0),
    days,
  };
}
