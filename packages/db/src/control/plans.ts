import { invalid, notFound } from "@prim/engine";
import type pg from "pg";
import { type Actor, auditedTransaction, type RecordAudit } from "./workspace-audit.js";

/** A workspace's plan (spec: Plans). Set by the operator (`prim admin plan set`) or by Stripe. */
export const PLANS = ["starter", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export function checkPlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw invalid(`plan: must be one of ${PLANS.join(", ")}`);
  return plan as Plan;
}

/** Custom per-key rates are Enterprise's only, positive integers. */
export function checkRate(plan: Plan, rps: number | undefined, burst: number | undefined): void {
  if ((rps !== undefined || burst !== undefined) && plan !== "enterprise") {
    throw invalid("--rps and --burst apply to enterprise workspaces only");
  }
  for (const [name, v] of [
    ["rps", rps],
    ["burst", burst],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw invalid(`${name}: must be a positive integer`);
  }
}

/**
 * The operator sets a workspace's plan (and, for Enterprise, its custom per-key rate), recorded
 * as `plan.change` (actor `admin`) with the plan before and after.
 */
export async function setPlan(
  pool: pg.Pool,
  input: { workspace: string; plan: string; rps?: number; burst?: number; actor?: Actor },
  /** Tells the limiter (Redis) that the plan changed: it applies to the very next request. */
  changed: (workspace: string) => Promise<void> = async () => {},
): Promise<{ workspace: { id: string; name: string; plan: Plan; rps: number | null; burst: number | null } }> {
  const plan = checkPlan(input.plan);
  checkRate(plan, input.rps, input.burst);
  const rps = input.rps ?? null;
  const burst = input.burst ?? null;
  const row = await auditedTransaction(pool, async (client, record) => {
    const before = await client.query<{ name: string; plan: Plan; rps: number | null; burst: number | null }>(
      "SELECT name, plan, rps, burst FROM workspaces WHERE id = $1 FOR UPDATE",
      [input.workspace],
    );
    const was = before.rows[0];
    if (was === undefined) throw notFound(`workspace '${input.workspace}'`);
    await client.query("UPDATE workspaces SET plan = $2, rps = $3, burst = $4 WHERE id = $1", [
      input.workspace,
      plan,
      rps,
      burst,
    ]);
    await record(input.workspace, {
      actor: input.actor ?? "admin",
      action: "plan.change",
      target: input.workspace,
      detail: { from: was.plan, to: plan, rps, burst },
    });
    return { id: input.workspace, name: was.name, rps, burst };
  });
  await changed(input.workspace);
  return { workspace: { ...row, plan } };
}

/**
 * Stripe's plan change (a webhook, in its transaction): sets a non-Enterprise workspace's plan
 * and records `plan.change` for `actor`; true when it changed (an unchanged plan records nothing).
 */
export async function setBillingPlan(
  client: pg.ClientBase,
  record: RecordAudit,
  input: { workspace: string; plan: "pro" | "starter"; actor: Actor; reason: string },
): Promise<boolean> {
  const before = await client.query<{ plan: Plan }>("SELECT plan FROM workspaces WHERE id = $1 FOR UPDATE", [
    input.workspace,
  ]);
  const was = before.rows[0]?.plan;
  if (was === undefined || was === input.plan || was === "enterprise") return false;
  await client.query("UPDATE workspaces SET plan = $2 WHERE id = $1", [input.workspace, input.plan]);
  await record(input.workspace, {
    actor: input.actor,
    action: "plan.change",
    target: input.workspace,
    detail: { from: was, to: input.plan, reason: input.reason },
  });
  return true;
}

/**
 * Workspaces whose grace period ran out while still unpaid go back to Starter (the billing
 * job, actor `billing`), each recorded as `plan.change`. Returns them, for their cached plans
 * to be dropped.
 */
export async function expireGrace(pool: pg.Pool, now: Date): Promise<string[]> {
  return auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ id: string }>(
      `UPDATE workspaces w SET plan = 'starter' FROM subscriptions s
          WHERE s.workspace_id = w.id AND s.grace_until IS NOT NULL AND s.grace_until <= $1
            AND w.plan = 'pro'
          RETURNING w.id`,
      [now],
    );
    for (const { id } of rows) {
      await record(id, {
        actor: "billing",
        action: "plan.change",
        target: id,
        detail: { from: "pro", to: "starter", reason: "grace period ended unpaid" },
      });
    }
    return rows.map((r) => r.id);
  });
}
