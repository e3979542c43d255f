import {
  auditedTransaction,
  countLiveCells,
  KeyBudgets,
  operationsKeyPrefix,
  planCacheKey,
  readPlan,
  STARTER_CAPS,
  type WorkspacePlan,
} from "@prim/db";
import { type KeyBudget, type LimitCall, type Limiter, writesStorage } from "@prim/engine";
import { Redis } from "ioredis";
import type pg from "pg";
import { answer, planFields, type ScriptReply } from "./answer.js";
import { budgetArgs, budgetRefusal, budgetUnchecked } from "./budget.js";
import { OperationCounts } from "./counts.js";
import { bucketShare, LocalBuckets, PendingCounts, PrimitiveCounts, Refreshed, utcPeriods } from "./fallback.js";
import { LEASE_SCRIPT } from "./lease-script.js";
import { LeasedLimits } from "./leased.js";
import { type Lease, type LeaseReply, Leases } from "./leases.js";
import { LIMIT_SCRIPT } from "./script.js";

/** The plans' figures (spec: Plans); Enterprise may carry its own rate (`--rps`/`--burst`). */
export const DEFAULT_RATE = { rps: 20, burst: 60 };
const STARTER_OPERATIONS = STARTER_CAPS.operations;
export const STARTER_STORAGE_BYTES = STARTER_CAPS.storageBytes;

/** Redis keys of a workspace, all under its hash tag. */
export const limitKeys = (ws: string) => ({
  plan: planCacheKey(ws),
  storage: `prim:{${ws}}:storage`,
  ops: operationsKeyPrefix(ws),
  bucket: (who: string) => `prim:{${ws}}:rl:${who}`,
});

/** How long a plan stays in Redis without a change (a change deletes it at once). */
const PLAN_TTL_S = 3600;
/** While Redis is away: how old the plans and the live cell count may get before Postgres is read again. */
export const FALLBACK_REFRESH_MS = 10_000;

interface LimitRedis extends Redis {
  primLimit(k1: string, k2: string, k3: string, ...args: (string | number)[]): Promise<ScriptReply>;
  primLease(k1: string, k2: string, now: string, want: number): Promise<LeaseReply>;
}

export interface RedisLimiterOptions {
  /** Answers slower than this count as Redis being down (default 50 ms). */
  timeoutMs?: number;
  /** Tests: the time the script uses instead of Redis's own (a moved clock). */
  now?: () => number;
  /** Where outage lines go (default console.warn). */
  log?: (line: string) => void;
  /** While Redis is away, plans and live cells are read again from Postgres this often (default 10 s). */
  fallbackRefreshMs?: number;
}

/**
 * The cloud's limiter (CLOUD.md, "Limits and metering"): a credential without a budget spends
 * tokens leased from its Redis bucket (leases.ts) and its operations are counted in batches
 * (counts.ts), so most calls make no Redis command; a budgeted key's calls (and a Starter
 * workspace's storage writes) run one script per call. Plans come from Postgres, cached in
 * Redis and, for the leases, here (dropped at once on a plan change: `planChanged`); an
 * in-process fallback limits while Redis is down or slow.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: LimitRedis;
  private readonly local = new LocalBuckets();
  private readonly pending = new PendingCounts();
  /** Plans per workspace, for the limits while Redis is away (re-read from Postgres as they age). */
  private readonly plans = new Map<string, Refreshed<WorkspacePlan>>();
  /** The api processes sharing each credential's bucket while Redis is away. */
  private readonly liveCells: Refreshed<number>;
  /** Workspaces limited here while Redis was away: their plans cached there are dropped on its return. */
  private readonly limitedWhileDown = new Set<string>();
  private readonly gauges = new Map<string, number>();
  private readonly monthOps = new Map<string, number>();
  /** Workspaces that made metered calls here (the roll-up reads their counters). */
  readonly active = new Set<string>();
  /** Operations per primitive counted here since the last roll-up (in memory: no Redis command). */
  readonly perPrimitive = new PrimitiveCounts();
  /** Leased tokens per credential, and the plan each workspace's last lease read. */
  private readonly leased: LeasedLimits;
  /** Operation counts on their way to Redis. */
  private readonly counts: OperationCounts;
  private down = false;
  private probe: NodeJS.Timeout | null = null;
  /** Children's budgets carved out of their parents' (minting and revoking keys), in the same Redis. */
  readonly budgets: KeyBudgets;

  constructor(
    redisUrl: string,
    private readonly pool: pg.Pool,
    private readonly options: RedisLimiterOptions = {},
  ) {
    this.redis = new Redis(redisUrl, {
      lazyConnect: false,
      // Calls that arrive in the same tick share one write to Redis (measured: bench/limits).
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.timeoutMs ?? 50,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    }) as LimitRedis;
    this.redis.on("error", () => {}); // outages are handled (and logged once) per call
    this.redis.defineCommand("primLimit", { numberOfKeys: 3, lua: LIMIT_SCRIPT });
    this.redis.defineCommand("primLease", { numberOfKeys: 2, lua: LEASE_SCRIPT });
    this.counts = new OperationCounts(
      this.redis,
      (counts) => {
        this.wentDown();
        for (const c of counts) {
          this.pending.add(c.month, c.n);
          this.pending.add(c.day, c.n);
        }
      },
      (ws, month) => this.monthOps.set(ws, month),
    );
    this.leased = new LeasedLimits({
      leases: new Leases(
        (ws, who, want) => this.takeLease(ws, who, want),
        () => this.now(),
      ),
      counts: this.counts,
      monthOps: this.monthOps,
      isDown: () => this.down,
      clock: () => this.now(),
    });
    this.budgets = new KeyBudgets(this.redis, () => this.now());
    // Until Postgres has answered: this process alone, the whole bucket (what it did before cells).
    this.liveCells = new Refreshed(() => countLiveCells(pool), 1);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private log(line: string): void {
    (this.options.log ?? console.warn)(line);
  }

  admit(call: LimitCall): Record<string, string> | undefined | Promise<Record<string, string> | undefined> {
    const { op } = call;
    // What the call is comes from its declaration in the engine (`writesStorage`, `planFeature`,
    // `lookup`, beside `metered`): a lookup a transport makes first is neither limited nor counted.
    if (op.lookup === true) return undefined;
    const ws = call.principal.workspace;
    // Signed URLs carry no credential: limited per client IP.
    const who = op.name === "storage.signed" ? `ip:${call.clientIp ?? "unknown"}` : call.principal.actor;
    const storageWrite = writesStorage(op, call.input);
    const feature = op.planFeature === true;
    // A batch counts each entry (spec: "What counts as an operation"; the queue's batch routes).
    const units = op.metered ? (op.units?.(call.input) ?? 1) : 0;
    if (units > 0) this.active.add(ws);
    let lease: Lease | undefined;
    if (!this.down && call.principal.budget === undefined) {
      const now = this.now();
      lease = this.leased.note(ws, who, now);
      // A leased token and nothing to wait for: answered now, with no Redis command.
      const spent = this.leased.now(ws, who, lease, units, storageWrite, feature, now);
      if (spent !== undefined) return spent;
    }
    return this.admitWaiting(call, ws, who, lease, units, storageWrite, feature);
  }

  /** `admit` when the call waits for Redis: a lease's refill, a flush, or the per-call script. */
  private async admitWaiting(
    call: LimitCall,
    ws: string,
    who: string,
    lease: Lease | undefined,
    units: number,
    storageWrite: boolean,
    feature: boolean,
  ): Promise<Record<string, string> | undefined> {
    const keys = limitKeys(ws);
    if (!this.down && lease !== undefined) {
      const leased = await this.leased.admit(ws, who, lease, units, storageWrite, feature);
      if (leased !== "script" && leased !== "local") return leased;
    }
    const args = [
      this.options.now === undefined ? "" : String(this.now()),
      keys.ops,
      units,
      storageWrite ? 1 : 0,
      feature ? 1 : 0,
      ...budgetArgs(call.principal, units),
    ];
    const script = () => this.redis.primLimit(keys.bucket(who), keys.plan, keys.storage, ...args);
    if (!this.down) {
      const reply = await this.withPlan(ws, script);
      if (reply !== undefined) {
        if (reply[0] === 5 && call.principal.budget !== undefined) {
          if (reply[4] === 1) this.auditSpent(call.principal.workspace, call.principal.actor, call.principal.budget);
          throw budgetRefusal(call.principal.budget, reply[1]);
        }
        if (reply[4] !== undefined && reply[4] >= 0) this.monthOps.set(ws, reply[4]);
        return answer(reply);
      }
    }
    return this.admitLocally(call, who, units, storageWrite, feature);
  }

  /** One lease script call for `who` (the plan loaded into Redis first when missing); undefined: Redis is down. */
  private async takeLease(ws: string, who: string, want: number): Promise<LeaseReply | undefined> {
    const keys = limitKeys(ws);
    const at = this.options.now === undefined ? "" : String(this.now());
    const reply = await this.withPlan(ws, () => this.redis.primLease(keys.bucket(who), keys.plan, at, want));
    if (reply !== undefined && reply[0] !== 4) this.leased.plans.set(ws, reply[5]);
    return reply;
  }

  /**
   * A workspace's plan changed (the revocation channel's `plan:<ws>`, published by
   * `Revocations.planChanged`): its plan and leases here are dropped, so its next call reads
   * the new plan.
   */
  planChanged(ws: string): void {
    this.leased.planChanged(ws);
  }

  /** Sends the counts waiting here to Redis now; `reread`: also reads back every month figure known here. */
  flush(reread = false): Promise<void> {
    return this.counts.flush(reread);
  }

  /**
   * `key.budget_exhausted`, once per period (the script tells the first refusal): off the
   * request path, as the refusal does not wait for it; a failure is logged, not retried.
   */
  private auditSpent(ws: string, actor: string, budget: KeyBudget): void {
    const id = actor.slice("key:".length);
    auditedTransaction(this.pool, (_client, record) =>
      record(ws, { actor, action: "key.budget_exhausted", target: id, detail: { budget } }),
    ).catch((error: unknown) => this.log(`limits: the audit of ${actor}'s spent budget failed: ${String(error)}`));
  }

  /**
   * Operations made for a workspace outside any call (a webhook delivery sent): counted as a
   * call's are (the month and day counters, the roll-up), never refused.
   */
  count(ws: string, units: number): void {
    const { month, day } = utcPeriods(this.now());
    const keys = limitKeys(ws);
    this.active.add(ws);
    this.monthOps.set(ws, (this.monthOps.get(ws) ?? 0) + units);
    if (this.down) {
      this.pending.add(keys.ops + month, units);
      this.pending.add(keys.ops + day, units);
      return;
    }
    this.counts.add(ws, keys.ops, units, this.now());
  }

  /** An admitted call's resolved primitive: its operations counted here, per UTC day. */
  resolved(call: LimitCall, primitiveId: string): void {
    if (call.op.lookup === true) return; // neither limited nor counted (admit)
    const units = call.op.metered ? (call.op.units?.(call.input) ?? 1) : 0;
    if (units > 0) this.perPrimitive.add(call.principal.workspace, primitiveId, units, this.now());
  }

  /**
   * Runs a limit or lease script; when it answers 4 (the plan is not in Redis), loads the plan
   * from Postgres into Redis and runs it once more (a Postgres failure is a 500, not a Redis
   * outage). Undefined: Redis is down.
   */
  private async withPlan<R extends [number, ...unknown[]]>(
    ws: string,
    script: () => Promise<R>,
  ): Promise<R | undefined> {
    const reply = await this.orDown(script);
    if (reply?.[0] !== 4) return reply;
    const fields = planFields(await this.loadPlan(ws));
    const key = limitKeys(ws).plan;
    return this.orDown(async () => {
      await this.redis.multi().hset(key, fields).expire(key, PLAN_TTL_S).exec();
      return script();
    });
  }

  /** Runs Redis commands; any failure of theirs (down, refused, slower than the timeout) is an outage. */
  private async orDown<T>(fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch {
      this.wentDown();
      return undefined;
    }
  }

  private planOf(ws: string): Refreshed<WorkspacePlan> {
    let plan = this.plans.get(ws);
    if (plan === undefined) {
      plan = new Refreshed(() => readPlan(this.pool, ws));
      this.plans.set(ws, plan);
    }
    return plan;
  }

  private async loadPlan(ws: string): Promise<WorkspacePlan> {
    const plan = await readPlan(this.pool, ws);
    this.planOf(ws).keep(plan, this.now());
    return plan;
  }

  /** The storage gauge of a workspace (bytes), as its engine last measured it. */
  async setStorage(ws: string, bytes: number): Promise<void> {
    this.gauges.set(ws, bytes);
    if (!this.down) await this.redis.set(limitKeys(ws).storage, String(bytes)).catch(() => this.wentDown());
  }

  /** The workspace's operations this UTC month and today, from Redis (null while it is down). */
  async operations(ws: string, at = this.now()): Promise<{ month: number; day: number } | null> {
    await this.counts.flush(); // what was counted here first
    const { month, day } = utcPeriods(at);
    const keys = limitKeys(ws);
    try {
      const [m, d] = await this.redis.mget(keys.ops + month, keys.ops + day);
      return { month: Number(m ?? 0), day: Number(d ?? 0) };
    } catch {
      return null;
    }
  }

  private async admitLocally(
    call: LimitCall,
    who: string,
    units: number,
    storageWrite: boolean,
    feature: boolean,
  ): Promise<Record<string, string>> {
    const ws = call.principal.workspace;
    // A budget is exact or it is nothing: without Redis no process knows what the others spent,
    // so a budgeted key's metered calls wait for it (429, retry in a second).
    if (budgetArgs(call.principal, units)[0] !== "") throw budgetUnchecked();
    const now = this.now();
    const refreshMs = this.options.fallbackRefreshMs ?? FALLBACK_REFRESH_MS;
    const plan = await this.planOf(ws).get(now, refreshMs);
    // Every live api process may be limiting this credential too: each takes its share, so
    // together they admit the plan's bucket.
    const processes = await this.liveCells.get(now, refreshMs);
    const { rate, burst } = bucketShare(plan.rps ?? DEFAULT_RATE.rps, plan.burst ?? DEFAULT_RATE.burst, processes);
    this.limitedWhileDown.add(ws);
    const taken = this.local.take(`${ws}:${who}`, now, rate, burst);
    if (!taken.ok) return answer([1, taken.retryAfter, burst, rate]);
    if (plan.plan === "starter") {
      if (feature) answer([3, 1, 0, 0]);
      if (units > 0 && (this.monthOps.get(ws) ?? 0) + units > STARTER_OPERATIONS) answer([2, 1, 0, 0]);
      if (storageWrite && (this.gauges.get(ws) ?? 0) >= STARTER_STORAGE_BYTES) answer([2, 2, 0, 0]);
    }
    if (units > 0) {
      this.monthOps.set(ws, (this.monthOps.get(ws) ?? 0) + units);
      const { month, day } = utcPeriods(this.now());
      const keys = limitKeys(ws);
      this.pending.add(keys.ops + month, units);
      this.pending.add(keys.ops + day, units);
    }
    return answer([0, taken.left, burst, rate]);
  }

  private wentDown(): void {
    if (this.down) return;
    this.down = true;
    this.log("limits: Redis does not answer; limiting in this process and keeping counts until it is back");
    this.probe = setInterval(() => void this.tryBack(), 1000);
    this.probe.unref();
  }

  private async tryBack(): Promise<void> {
    try {
      await this.redis.ping();
    } catch {
      return;
    }
    const counts = this.pending.drain();
    const limited = [...this.limitedWhileDown];
    try {
      const multi = this.redis.multi();
      for (const [key, n] of counts) multi.incrby(key, n).expire(key, 40 * 86400, "NX");
      // A plan changed while Redis was away could not drop its cached copy there: drop them all.
      for (const ws of limited) multi.del(limitKeys(ws).plan);
      for (const ws of limited) this.planChanged(ws);
      await multi.exec();
    } catch {
      for (const [key, n] of counts) this.pending.add(key, n);
      return;
    }
    for (const ws of limited) this.limitedWhileDown.delete(ws);
    this.down = false;
    if (this.probe !== null) clearInterval(this.probe);
    this.probe = null;
    this.log(`limits: Redis is back; ${counts.length} buffered counters added`);
  }

  async close(): Promise<void> {
    if (this.probe !== null) clearInterval(this.probe);
    if (!this.down) await this.counts.flush(); // the counts still here
    this.redis.disconnect();
  }
}
