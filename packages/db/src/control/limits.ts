import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

/** A workspace's plan as the limiter reads it (`rps`/`burst` only when the plan sets them). */
export interface WorkspacePlan {
  plan: string;
  rps: number | null;
  burst: number | null;
}

/** The plan of `workspace`; one that does not exist limits as Starter. */
export async function readPlan(db: Queryable, workspace: string): Promise<WorkspacePlan> {
  const { rows } = await db.query<WorkspacePlan>("SELECT plan, rps, burst FROM workspaces WHERE id = $1", [workspace]);
  return rows[0] ?? { plan: "starter", rps: null, burst: null };
}

/**
 * How many api processes serve (each cell is one, `closed` ones included; `down` ones do not):
 * while Redis is away each takes this share of a credential's bucket.
 */
export async function countLiveCells(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM cells WHERE state <> 'down'");
  return rows[0]?.n ?? 0;
}
