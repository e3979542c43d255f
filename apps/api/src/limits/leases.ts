/**
 * Token leases (CLOUD.md, "Limits and metering"): this process takes a credential's tokens from
 * its Redis bucket a few at a time (lease-script.ts) and spends them without a Redis command.
 * Only an empty (or lapsed) lease goes to Redis, and then once: every caller of the credential
 * waiting at that moment shares the one refill in flight.
 *
 * A lease's size is about `LEASE_WINDOW_MS` of the credential's calls here (the larger of the
 * current and the previous window's count, plus the callers waiting), at least 1, and a process
 * never holds more than `leaseCap(burst)` of a credential's tokens. A busy lease is topped up
 * before it runs out (once half of what the last refill granted is spent, one refill in the
 * background asks for the rest up to its size), so its callers rarely wait for Redis. Unspent
 * tokens lapse `LEASE_TTL_MS` after the last refill (they are not given back): a credential that
 * stops holds nothing past that, and a plan change drops them at once. Every token spent here
 * was taken from the bucket, so over any window the processes together admit at most what the
 * bucket gives plus what their leases held when it began: burst + rate × window +
 * `leaseCap(burst)` × processes.
 */

/** The lease script's answer: status, tokens left in Redis (or Retry-After), burst, rate, granted, plan. */
export type LeaseReply = [number, number, number, number, number, string];

export const LEASE_TTL_MS = 1000;
export const LEASE_WINDOW_MS = 100;
export const MAX_LEASE = 256;

/**
 * The most tokens a process holds of a bucket of `burst`: a quarter of it, 1 to `MAX_LEASE`
 * (15 for the plans' burst of 60; the fixed cap matters only to an Enterprise burst ≥ 1024).
 */
export const leaseCap = (burst: number) => Math.max(1, Math.min(Math.floor(burst / 4), MAX_LEASE));

export interface Lease {
  /** Tokens to spend here. */
  left: number;
  /** What the last refill granted (a top-up starts once half of it is spent). */
  granted: number;
  /** Tokens the bucket held in Redis after the last lease (the `RateLimit` header adds `left`). */
  redisLeft: number;
  burst: number;
  rate: number;
  /** When unspent tokens lapse (the limiter's clock). */
  expires: number;
  /** Rate sizing: the current window's start and calls, and the previous window's calls. */
  window: number;
  calls: number;
  lastCalls: number;
  waiting: number;
  refill: Promise<LeaseOutcome> | null;
}

export type LeaseOutcome =
  | { kind: "leased"; lease: Lease }
  | { kind: "refused"; retryAfter: number; burst: number; rate: number }
  | { kind: "down" };

export class Leases {
  /** workspace → credential (`who`) → lease. */
  private readonly byWorkspace = new Map<string, Map<string, Lease>>();
  private count = 0;

  constructor(
    /** One lease script call (undefined: Redis does not answer). */
    private readonly take: (ws: string, who: string, want: number) => Promise<LeaseReply | undefined>,
    private readonly clock: () => number,
  ) {}

  /** The lease of `who`, with this call counted (its size follows the calls). */
  note(ws: string, who: string, now: number): Lease {
    const lease = this.lease(ws, who, now);
    if (now - lease.window >= LEASE_WINDOW_MS) {
      lease.lastCalls = now - lease.window < 2 * LEASE_WINDOW_MS ? lease.calls : 0;
      lease.window = now;
      lease.calls = 0;
    }
    lease.calls++;
    return lease;
  }

  /** Whether `lease` holds a token to spend now. */
  ready(lease: Lease, now: number): boolean {
    return lease.left >= 1 && now < lease.expires;
  }

  /**
   * `lease` (of `who`, noted) holding a token, refilled first when empty or lapsed; the caller
   * spends the token (`spend`) once its other checks pass, with no await in between.
   */
  async ensure(ws: string, who: string, lease: Lease, now: number): Promise<LeaseOutcome> {
    for (;;) {
      if (lease.left >= 1 && now < lease.expires) return { kind: "leased", lease };
      lease.refill ??= this.refill(ws, who, lease);
      lease.waiting++;
      let outcome: LeaseOutcome;
      try {
        outcome = await lease.refill;
      } finally {
        lease.waiting--;
      }
      if (outcome.kind !== "leased") return outcome;
      now = Math.max(now, this.clock());
    }
  }

  spend(ws: string, who: string, lease: Lease): void {
    lease.left--;
    if (lease.refill === null && lease.left * 2 < lease.granted && lease.left + 1 < leaseCap(lease.burst)) {
      // The caller does not wait for it; a failure is the next waiting caller's to see.
      lease.refill = this.refill(ws, who, lease);
      lease.refill.catch(() => {});
    }
  }

  /** Drops a workspace's leases (its plan changed): their next calls take new ones. */
  drop(ws: string): void {
    const leases = this.byWorkspace.get(ws);
    if (leases === undefined) return;
    this.count -= leases.size;
    this.byWorkspace.delete(ws);
  }

  private lease(ws: string, who: string, now: number): Lease {
    let leases = this.byWorkspace.get(ws);
    if (leases === undefined) {
      if (this.count > 100_000) this.drop(this.byWorkspace.keys().next().value as string);
      leases = new Map();
      this.byWorkspace.set(ws, leases);
    }
    let lease = leases.get(who);
    if (lease === undefined) {
      lease = {
        left: 0,
        granted: 0,
        redisLeft: 0,
        burst: 0,
        rate: 1,
        expires: 0,
        window: now,
        calls: 0,
        lastCalls: 0,
        waiting: 0,
        refill: null,
      };
      leases.set(who, lease);
      this.count++;
    }
    return lease;
  }

  private async refill(ws: string, who: string, lease: Lease): Promise<LeaseOutcome> {
    const now = this.clock();
    // A lapsed lease holds nothing; a live one is topped up to its size.
    const held = now < lease.expires ? lease.left : 0;
    const sized = Math.min(Math.max(lease.calls, lease.lastCalls) + lease.waiting, leaseCap(lease.burst));
    const want = Math.max(1, sized - held);
    try {
      const reply = await this.take(ws, who, want);
      if (reply === undefined) return { kind: "down" };
      const [status, a, burst, rate, granted] = reply;
      lease.burst = burst;
      lease.rate = rate;
      if (status === 1) return { kind: "refused", retryAfter: a, burst, rate };
      const at = this.clock();
      lease.left = (at < lease.expires ? lease.left : 0) + granted;
      lease.granted = granted;
      lease.redisLeft = a;
      lease.expires = at + LEASE_TTL_MS;
      return { kind: "leased", lease };
    } finally {
      lease.refill = null;
    }
  }
}
