import { operationsKeyPrefix, STARTER_CAPS } from "@prim/db";
import { answer } from "./answer.js";
import type { OperationCounts } from "./counts.js";
import type { Lease, Leases } from "./leases.js";

const STARTER_OPERATIONS = STARTER_CAPS.operations;

/**
 * The calls of credentials without a budget (CLOUD.md, "Limits and metering"; leases.ts,
 * counts.ts): a token from the credential's lease, the Starter rules on the plan its lease read,
 * the operations added to the next flush. Most answer at once (`now`), with no Redis command.
 */
export class LeasedLimits {
  /** The plan (name) each workspace's last lease read; dropped on a plan change. */
  readonly plans = new Map<string, string>();

  constructor(
    private readonly deps: {
      leases: Leases;
      counts: OperationCounts;
      /** The month's figure per workspace for the fallback (limiter.ts). */
      monthOps: Map<string, number>;
      isDown: () => boolean;
      /** The limiter's clock (tests move it). */
      clock: () => number;
    },
  ) {}

  /** The lease of `who`, this call counted. */
  note(ws: string, who: string, now: number): Lease {
    return this.deps.leases.note(ws, who, now);
  }

  /**
   * The call answered at once when `lease` holds a token and nothing is to wait for: its
   * headers, or its refusal thrown; undefined otherwise (then `admit`).
   */
  now(
    ws: string,
    who: string,
    lease: Lease,
    units: number,
    storageWrite: boolean,
    feature: boolean,
    now: number,
  ): Record<string, string> | undefined {
    if (!this.deps.leases.ready(lease, now)) return undefined;
    const plan = this.plans.get(ws);
    if (plan === undefined) return undefined;
    return this.spend(ws, who, lease, plan, units, storageWrite, feature, now);
  }

  /** Drops a workspace's plan and leases (its plan changed). */
  planChanged(ws: string): void {
    this.plans.delete(ws);
    this.deps.leases.drop(ws);
  }

  /**
   * A call of a credential without a budget: a token from its lease, the Starter rules on the
   * plan the lease read, the operations added to the next flush. `script`: the call needs the
   * per-call script (a Starter storage write: the gauge is Redis's); `local`: Redis is down.
   */
  async admit(
    ws: string,
    who: string,
    noted: Lease,
    units: number,
    storageWrite: boolean,
    feature: boolean,
  ): Promise<Record<string, string> | "script" | "local"> {
    let lease = noted;
    for (;;) {
      const now = this.deps.clock();
      const outcome = await this.deps.leases.ensure(ws, who, lease, now);
      if (outcome.kind === "down" || this.deps.isDown()) return "local";
      if (outcome.kind === "refused") return answer([1, outcome.retryAfter, outcome.burst, outcome.rate]);
      const plan = this.plans.get(ws);
      if (plan === undefined || outcome.lease.left < 1) {
        lease = this.deps.leases.note(ws, who, now); // the plan changed meanwhile: a new lease
        continue;
      }
      const spent = this.spend(ws, who, outcome.lease, plan, units, storageWrite, feature, now);
      if (spent !== undefined) return spent;
      if (plan === "starter" && storageWrite) return "script";
      await this.deps.counts.flush(); // the month's figure unknown, or too many unflushed
      if (this.deps.isDown()) return "local";
    }
  }

  /**
   * Spends a token of `lease` (which holds one) when the Starter rules on `plan` admit the call:
   * the headers, or the refusal thrown; undefined when the call must wait (a flush) or needs the
   * per-call script (a Starter storage write: the gauge is Redis's). Nothing is spent then.
   */
  private spend(
    ws: string,
    who: string,
    lease: Lease,
    plan: string,
    units: number,
    storageWrite: boolean,
    feature: boolean,
    now: number,
  ): Record<string, string> | undefined {
    const starter = plan === "starter";
    if (starter && feature) return answer([3, 1, 0, 0]);
    if (starter && storageWrite) return undefined;
    if (units > 0) {
      const prefix = operationsKeyPrefix(ws);
      const check = this.deps.counts.check(ws, prefix, units, now, starter ? STARTER_OPERATIONS : null);
      if (check === "over") return answer([2, 1, 0, 0]);
      if (check === "flush") return undefined;
      this.deps.counts.add(ws, prefix, units, now);
      this.deps.monthOps.set(ws, (this.deps.monthOps.get(ws) ?? 0) + units);
    }
    this.deps.leases.spend(ws, who, lease);
    const left = Math.min(lease.burst, Math.floor(lease.redisLeft + lease.left));
    return answer([0, left, lease.burst, lease.rate]);
  }
}
