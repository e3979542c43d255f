import type { KeyBudget } from "@prim/engine";
import { ServiceError } from "@prim/engine";
import { Redis } from "ioredis";

/**
 * A child key's budget carved out of its parent's (issue 41, "Minted keys"), in Redis beside
 * the counters the limit script keeps (apps/api limits/script.ts reads `…:carved` too):
 *
 * - `prim:{ws}:budget:key:<id>` (+ `:YYYYMMDD` or `:YYYYMM` for a per-day or per-month budget):
 *   the key's own metered operations in its period, or in total.
 * - `prim:{ws}:budget:key:<id>:carved`: what its children hold, taken off its limit in every
 *   period (a child's per-day budget is the parent's per day too) or once (a total).
 *
 * So a key spends at most `limit - carved`, and its children their own budgets: together no more
 * than the parent's limit. Minting reserves atomically (two concurrent mints cannot both take the
 * last operations); revoking a child gives its reservation back and moves what it spent (or
 * reserved further down) into the parent's own counter, so nothing spent is counted twice or
 * forgotten. Revocations by an admin or the dashboard do not release (the reservation stays
 * taken: a parent can only lose, never gain).
 */

/** The budget counter of a credential (under the workspace's hash tag, beside its bucket). */
export const budgetKey = (ws: string, who: string) => `prim:{${ws}}:budget:${who}`;

/** The counter of `budget`'s period at `now` (what the limit script names from its clock). */
export function budgetCounter(ws: string, who: string, budget: KeyBudget, now: number): string {
  const base = budgetKey(ws, who);
  if ("total" in budget) return base;
  const iso = new Date(now).toISOString();
  const month = iso.slice(0, 4) + iso.slice(5, 7);
  return `${base}:${budget.per === "day" ? month + iso.slice(8, 10) : month}`;
}

export const amountOf = (budget: KeyBudget) => ("total" in budget ? budget.total : budget.limit);

/** KEYS: 1 parent's counter, 2 parent's carved. ARGV: 1 parent's limit, 2 amount. → {ok, left} */
const RESERVE = `
local used = tonumber(redis.call('GET', KEYS[1])) or 0
local carved = tonumber(redis.call('GET', KEYS[2])) or 0
local left = tonumber(ARGV[1]) - used - carved
local amount = tonumber(ARGV[2])
if amount > left then return {0, left} end
redis.call('INCRBY', KEYS[2], amount)
return {1, left - amount}
`;

/**
 * KEYS: 1 parent's counter, 2 parent's carved, 3 child's counter, 4 child's carved.
 * ARGV: 1 the child's amount, 2 the parent's counter's expiry in s (0 = none).
 */
const RELEASE = `
local amount = tonumber(ARGV[1])
local spent = (tonumber(redis.call('GET', KEYS[3])) or 0) + (tonumber(redis.call('GET', KEYS[4])) or 0)
if spent > amount then spent = amount end
local carved = tonumber(redis.call('GET', KEYS[2])) or 0
redis.call('SET', KEYS[2], math.max(0, carved - amount))
if spent > 0 and redis.call('INCRBY', KEYS[1], spent) == spent and tonumber(ARGV[2]) > 0 then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return spent
`;

interface BudgetRedis extends Redis {
  primBudgetReserve(k1: string, k2: string, limit: number, amount: number): Promise<[number, number]>;
  primBudgetRelease(k1: string, k2: string, k3: string, k4: string, amount: number, ttl: number): Promise<number>;
}

/** A key of the tree with a budget, as `reserve` and `release` need it. */
export interface BudgetedKey {
  id: string;
  budget: KeyBudget;
}

export class KeyBudgets {
  private readonly redis: BudgetRedis;

  /** Its own connection (apps/mcp, which has no limiter): `close()` ends it. */
  static connect(redisUrl: string): KeyBudgets {
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 2000 });
    redis.on("error", () => {}); // a refusal answers the mint (429), nothing crashes
    const budgets = new KeyBudgets(redis);
    budgets.owned = true;
    return budgets;
  }

  private owned = false;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
  ) {
    this.redis = redis as BudgetRedis;
    this.redis.defineCommand("primBudgetReserve", { numberOfKeys: 2, lua: RESERVE });
    this.redis.defineCommand("primBudgetRelease", { numberOfKeys: 4, lua: RELEASE });
  }

  /**
   * Takes `amount` off what `parent` may still spend (this period, or in total), or 403
   * `forbidden` naming what is left. Answers the undo (a mint whose transaction fails).
   */
  async reserve(ws: string, parent: BudgetedKey, amount: number): Promise<() => Promise<void>> {
    const who = `key:${parent.id}`;
    const carved = `${budgetKey(ws, who)}:carved`;
    let reply: [number, number];
    try {
      reply = await this.redis.primBudgetReserve(
        budgetCounter(ws, who, parent.budget, this.now()),
        carved,
        amountOf(parent.budget),
        amount,
      );
    } catch {
      throw new ServiceError(
        "rate_limited",
        "the parent's budget cannot be counted right now (the limits store does not answer); retry after 1 s",
        { headers: { "Retry-After": "1" } },
      );
    }
    if (reply[0] !== 1) {
      const left = Math.max(0, reply[1]);
      throw new ServiceError(
        "forbidden",
        `budget: the parent has ${left.toLocaleString("en")} operations left to give${"total" in parent.budget ? "" : ` this ${parent.budget.per}`}, fewer than the ${amount.toLocaleString("en")} asked`,
      );
    }
    return async () => {
      await this.redis.decrby(carved, amount).catch(() => {});
    };
  }

  /**
   * A revoked child's reservation back to its parent, less what it spent or gave on (moved into
   * the parent's own counter, in this period for a periodic budget). Best effort: should Redis
   * not answer, the reservation stays taken (the parent loses, never gains).
   */
  async release(ws: string, parent: BudgetedKey, child: BudgetedKey): Promise<void> {
    const now = this.now();
    const parentWho = `key:${parent.id}`;
    const childWho = `key:${child.id}`;
    const ttl = "total" in parent.budget ? 0 : parent.budget.per === "day" ? 3 * 86400 : 40 * 86400;
    await this.redis
      .primBudgetRelease(
        budgetCounter(ws, parentWho, parent.budget, now),
        `${budgetKey(ws, parentWho)}:carved`,
        budgetCounter(ws, childWho, child.budget, now),
        `${budgetKey(ws, childWho)}:carved`,
        amountOf(child.budget),
        ttl,
      )
      .catch(() => {});
  }

  /** Ends the connection `connect` made (a shared one is its owner's to close). */
  async close(): Promise<void> {
    if (this.owned) this.redis.disconnect();
  }
}
