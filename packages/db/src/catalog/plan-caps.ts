import { ServiceError } from "@prim/wire";
import type pg from "pg";
import { inTransaction } from "../connect.js";
import { STARTER_CAPS } from "../control/usage.js";

/** The catalog tables whose rows a plan counts (spec, Enforcement 3 and 4). */
export type CountedTable = "primitives" | "groups";

/** Starter's count caps and how each refusal reads; Pro and Enterprise have none. */
const STARTER_COUNT_CAPS: Record<CountedTable, { limit: number; refusal: () => ServiceError }> = {
  primitives: {
    limit: STARTER_CAPS.primitives,
    refusal: () =>
      new ServiceError("plan_limit", `the Starter plan allows ${STARTER_CAPS.primitives} primitives; upgrade to Pro`, {
        status: 429,
      }),
  },
  groups: {
    limit: STARTER_CAPS.groups,
    refusal: () => new ServiceError("plan_limit", "the Starter plan has one group; upgrade to Pro for more"),
  },
};

/**
 * Runs `insert` (one row into `table`) only while the workspace's plan allows another row, in
 * one transaction: the workspace's row is locked first, so creates of one workspace wait for
 * each other whichever process runs them, and each counts the rows the previous one committed.
 * `FOR NO KEY UPDATE` conflicts with itself but not with the key-share locks other inserts take
 * on the workspace row (foreign keys: audit entries, keys), so only creates queue behind it.
 */
export async function insertWithinPlan<T>(
  pool: pg.Pool,
  workspace: string,
  table: CountedTable,
  insert: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ plan: string }>(
      "SELECT plan FROM workspaces WHERE id = $1 FOR NO KEY UPDATE",
      [workspace],
    );
    if (rows[0]?.plan === "starter") {
      const cap = STARTER_COUNT_CAPS[table];
      const counted = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = $1`,
        [workspace],
      );
      if ((counted.rows[0]?.n ?? 0) >= cap.limit) throw cap.refusal();
    }
    return insert(client);
  });
}
