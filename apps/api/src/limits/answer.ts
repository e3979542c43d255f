import { STARTER_CAPS, type WorkspacePlan } from "@prim/db";
import { ServiceError } from "@prim/engine";

const STARTER_OPERATIONS = STARTER_CAPS.operations;

/** A script's answer: status and its figures (script.ts, lease-script.ts). */
export type ScriptReply = [number, number, number, number, number?, number?];

/** The plan as the script reads it from Redis (`rps`/`burst` only when the plan sets them). */
export function planFields(plan: WorkspacePlan): Record<string, string> {
  const fields: Record<string, string> = { plan: plan.plan };
  if (plan.rps !== null) fields.rps = String(plan.rps);
  if (plan.burst !== null) fields.burst = String(plan.burst);
  return fields;
}

/** The script's answer as response headers, or the refusal it stands for. */
export function answer([status, a, burst, rate]: ScriptReply): Record<string, string> {
  const window = Math.max(1, Math.ceil(burst / rate));
  const policy = `"default";q=${burst};w=${window}`;
  if (status === 0) {
    const full = Math.max(0, Math.ceil((burst - a) / rate));
    return { "RateLimit-Policy": policy, RateLimit: `"default";r=${a};t=${full}` };
  }
  if (status === 1) {
    throw new ServiceError(
      "rate_limited",
      `too many requests: at most ${Number(rate.toFixed(2))}/s, bursts of ${burst}; retry after ${a} s`,
      {
        headers: { "Retry-After": String(a), "RateLimit-Policy": policy, RateLimit: `"default";r=0;t=${a}` },
      },
    );
  }
  if (status === 2) {
    const what = [
      "",
      `the Starter plan's ${STARTER_OPERATIONS.toLocaleString("en")} operations this month are used up, or fewer remain than the call's entries (they reset on the 1st, UTC)`,
      "the Starter plan's 5 GB of storage is full: writes are refused, reads and deletes work",
    ][a];
    throw new ServiceError("plan_limit", `${what}; upgrade to Pro`, { status: 429 });
  }
  if (status === 3) {
    throw new ServiceError(
      "plan_limit",
      "snapshots, restore, fork, group export and import and the audit log need the Pro plan",
    );
  }
  throw new Error(`limit script answered ${status}`);
}
