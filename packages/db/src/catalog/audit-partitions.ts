import type pg from "pg";

/** Postgres: duplicate_table, unique_violation (another process made the same partition). */
const RACED = new Set(["42P07", "23505"]);

/**
 * Runs an audit partition upkeep query (`prim_audit_partitions`); when another process made the
 * same partition at the same moment (several cells starting together, or at midnight), again:
 * it is there now.
 */
export async function partitionUpkeep(pool: pg.Pool, sql: string, at: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await pool.query(sql, [at]);
      return;
    } catch (err) {
      if (!RACED.has((err as { code?: string }).code ?? "") || attempt === 5) throw err;
    }
  }
}

/**
 * Makes sure the audit partition of the day of `at` exists (the api makes today's when it
 * starts; `prim admin` may run on a day no api has started yet). Drops nothing.
 */
export const ensureAuditDay = (pool: pg.Pool, at: number): Promise<void> =>
  partitionUpkeep(pool, "SELECT prim_audit_partitions($1, 1000000, 0)", at);
