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
import { type KeyBudget, type LimitCall, type Limiter, ServiceError, writesStorage } from "@prim/engine";
import { Redis } from "ioredis";
import type pg from "pg";
import { budgetArgs, budgetRefusal, budgetUnchecked } from "./budget.js";
import { bucketShare, LocalBuckets, PendingCounts, PrimitiveCounts, Refreshed, utcPeriods } from "./fallback.js";
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

type ScriptReply = [number, number, number, number, number?, number?];

interface LimitRedis extends Redis {
  primLimit(k1: string, k2: string, k3: string, ...args: (string | number)[]): Promise<ScriptReply>;
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
 * The cloud's limiter (CLOUD.md, "Limits and metering"): one script per call in Redis, plans
 * from Postgres cached in Redis, and an in-process fallback while Redis is down or slow.
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

  async admit(call: LimitCall): Promise<Record<string, string> | undefined> {
    const { op } = call;
    // What the call is comes from its declaration in the engine (`writesStorage`, `planFeature`,
    // `lookup`, beside `metered`): a lookup a transport makes first is neither limited nor counted.
    if (op.lookup === true) return undefined;
    const ws = call.principal.workspace;
    const keys = limitKeys(ws);
    // Signed URLs carry no credential: limited per client IP.
    const who = op.name === "storage.signed" ? `ip:${call.clientIp ?? "unknown"}` : call.principal.actor;
    const storageWrite = writesStorage(op, call.input);
    const feature = op.planFeature === true;
    // A batch counts each entry (spec: "What counts as an operation"; the queue's batch routes).
    const units = op.metered ? (op.units?.(call.input) ?? 1) : 0;
    if (units > 0) this.active.add(ws);
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
      let reply = await this.orDown(script);
      if (reply?.[0] === 4) {
        // The plan is not cached: Postgres has it (a failure there is a 500, not a Redis outage).
        const fields = planFields(await this.loadPlan(ws));
        reply = await this.orDown(async () => {
          await this.redis.multi().hset(keys.plan, fields).expire(keys.plan, PLAN_TTL_S).exec();
          return script();
        });
      }
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
    const buffer = () => {
      this.pending.add(keys.ops + month, units);
      this.pending.add(keys.ops + day, units);
    };
    if (this.down) {
      buffer();
      return;
    }
    this.redis
      .multi()
      .incrby(keys.ops + month, units)
      .expire(keys.ops + month, 40 * 86400)
      .incrby(keys.ops + day, units)
      .expire(keys.ops + day, 3 * 86400)
      .exec()
      .catch(() => {
        this.wentDown();
        buffer();
      });
  }

  /** An admitted call's resolved primitive: its operations counted here, per UTC day. */
  resolved(call: LimitCall, primitiveId: string): void {
    if (call.op.lookup === true) return; // neither limited nor counted (admit)
    const units = call.op.metered ? (call.op.units?.(call.input) ?? 1) : 0;
    if (units > 0) this.perPrimitive.add(call.principal.workspace, primitiveId, units, this.now());
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
    this.redis.disconnect();
  }
}

/** The plan as the script reads it from Redis (`rps`/`burst` only when the plan sets them). */
function planFields(plan: WorkspacePlan): Record<string, string> {
  const fields: Record<string, string> = { plan: plan.plan };
  if (plan.rps !== null) fields.rps = String(plan.rps);
  if (plan.burst !== null) fields.burst = String(plan.burst);
  return fields;
}

/** The script's answer as response headers, or the refusal it stands for. */
function answer([status, a, burst, rate]: ScriptReply): Record<string, string> {
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
