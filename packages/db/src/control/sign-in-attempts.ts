import { Redis } from "ioredis";

/** A fixed window: at most `max` reserved attempts per key in `windowSeconds`. */
export interface AttemptRule {
  max: number;
  windowSeconds: number;
}

export interface AttemptVerdict {
  allowed: boolean;
  /** Seconds until the window ends (when refused). */
  retryAfter: number;
}

/** Where the counters live in Redis (the key is already an opaque hash: no address in Redis). */
const keyOf = (key: string) => `prim:sign-in:${key}`;

// Reserve: refused at `max` without counting; the window starts with the first attempt.
const RESERVE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then
  local ttl = redis.call('TTL', KEYS[1])
  if ttl < 1 then ttl = tonumber(ARGV[2]) end
  return {0, ttl}
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return {1, 0}`;
// Release: only within the window it was reserved in (an expired key is not brought back).
const RELEASE = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0`;

/**
 * Sign-in attempts per account, shared by every dashboard process through Redis (issue 35): an
 * attempt reserves a slot before the password is checked (so concurrent guesses cannot all
 * pass one stale count), and gives it back unless it was a wrong password. While Redis does not
 * answer, each process counts on its own (the same rule, in memory) rather than letting
 * everything through or refusing everyone.
 */
export class SignInAttempts {
  private readonly redis: Redis;
  private readonly local = new Map<string, { count: number; until: number }>();

  constructor(redisUrl: string) {
    // No offline queue: while Redis is away a sign-in falls back at once instead of waiting.
    this.redis = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
    });
    this.redis.on("error", () => {}); // reconnection is ioredis's job
  }

  async reserve(key: string, rule: AttemptRule, now = Date.now()): Promise<AttemptVerdict> {
    try {
      if (this.redis.status === "wait") await this.redis.connect();
      const [allowed, ttl] = (await this.redis.eval(RESERVE, 1, keyOf(key), rule.max, rule.windowSeconds)) as [
        number,
        number,
      ];
      return { allowed: allowed === 1, retryAfter: ttl };
    } catch {
      return this.reserveLocally(key, rule, now);
    }
  }

  async release(key: string, now = Date.now()): Promise<void> {
    try {
      if (this.redis.status === "wait") await this.redis.connect();
      await this.redis.eval(RELEASE, 1, keyOf(key));
    } catch {
      const entry = this.local.get(key);
      if (entry !== undefined && entry.until > now && entry.count > 0) entry.count--;
    }
  }

  /** Forgets an account's failures (its password was just reset through its mailbox). */
  async clear(key: string): Promise<void> {
    this.local.delete(key);
    try {
      if (this.redis.status === "wait") await this.redis.connect();
      await this.redis.del(keyOf(key));
    } catch {
      // the window ends on its own
    }
  }

  close(): void {
    this.redis.disconnect();
  }

  private reserveLocally(key: string, rule: AttemptRule, now: number): AttemptVerdict {
    if (this.local.size > 10_000) for (const [k, e] of this.local) if (e.until <= now) this.local.delete(k);
    let entry = this.local.get(key);
    if (entry === undefined || entry.until <= now) {
      entry = { count: 0, until: now + rule.windowSeconds * 1000 };
      this.local.set(key, entry);
    }
    if (entry.count >= rule.max) return { allowed: false, retryAfter: Math.ceil((entry.until - now) / 1000) };
    entry.count++;
    return { allowed: true, retryAfter: 0 };
  }
}
