import type { Redis } from "ioredis";
import { utcPeriods } from "./fallback.js";

/**
 * Batched operation counts (CLOUD.md, "Limits and metering"): an admitted call's operations are
 * added here and reach the workspace's month and day counters in Redis in one pipeline every
 * `FLUSH_MS` (sooner when a workspace has `UNFLUSHED_CAP` waiting), and on close. Each flush's
 * INCRBY answers are the month's figure as this process last knew it (`known`); the Starter cap
 * is checked against that figure plus what is unflushed here.
 *
 * Bounds (docs/cloud.md): a workspace never has more than `UNFLUSHED_CAP` operations unflushed in
 * one process (a call that would pass it waits for a flush; a single call's batch larger than
 * that goes alone), so a crash loses at most that many per workspace and process, and a Starter
 * workspace ends at most `UNFLUSHED_CAP` × processes past its cap (each process admits past its
 * last known figure only what it has not flushed yet).
 */
export const FLUSH_MS = 10;
export const UNFLUSHED_CAP = 256;
const MONTH_TTL_S = 40 * 86400;
const DAY_TTL_S = 3 * 86400;

interface Pending {
  ws: string;
  month: string;
  day: string;
  n: number;
}

/** A Starter call's check: admitted, over the cap, or to be asked again after a flush. */
export type CapCheck = "ok" | "over" | "flush";

export class OperationCounts {
  /** `monthKey|dayKey` → operations to add. */
  private pending = new Map<string, Pending>();
  /** Per workspace: operations admitted here and not yet answered by Redis (pending and in flight). */
  private readonly unflushed = new Map<string, number>();
  /** Month counter key → its figure in Redis as this process last heard it. */
  private readonly known = new Map<string, number>();
  /** Month counter keys to read (GET) at the next flush. */
  private readonly reread = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private today = { from: 0, until: 0, month: "", day: "" };

  constructor(
    private readonly redis: Redis,
    /** Counts Redis did not take (it went down): the limiter keeps them until it is back. */
    private readonly onDown: (counts: Pending[]) => void,
    /** Each month figure Redis answered, per workspace (the fallback's starting figure). */
    private readonly onFigure: (ws: string, month: number) => void,
  ) {}

  /** Adds an admitted call's operations (no Redis command; the next flush sends them). */
  add(ws: string, prefix: string, units: number, now: number): void {
    const { month, day } = this.periods(now);
    const monthKey = prefix + month;
    const dayKey = prefix + day;
    const id = `${monthKey}|${dayKey}`;
    const p = this.pending.get(id);
    if (p === undefined) this.pending.set(id, { ws, month: monthKey, day: dayKey, n: units });
    else p.n += units;
    const unflushed = (this.unflushed.get(ws) ?? 0) + units;
    this.unflushed.set(ws, unflushed);
    // Counts no call waits for (a webhook delivery's) go at once past the cap too.
    if (unflushed >= UNFLUSHED_CAP && this.flushing === null) void this.flush();
    else {
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref?.();
    }
  }

  /**
   * Whether `units` more operations of workspace `ws` may be admitted now: on a Starter plan
   * against `cap` (`over`: refused), and on every plan within `UNFLUSHED_CAP` (`flush`: wait
   * for one, then ask again; also while this month's figure is not known yet).
   */
  check(ws: string, prefix: string, units: number, now: number, cap: number | null): CapCheck {
    const unflushed = this.unflushed.get(ws) ?? 0;
    if (cap !== null) {
      const monthKey = prefix + this.periods(now).month;
      const known = this.known.get(monthKey);
      if (known === undefined) {
        this.reread.add(monthKey);
        return "flush";
      }
      // The figure only grows within a month: a flush would not make room.
      if (known + unflushed + units > cap) return "over";
    }
    if (unflushed > 0 && unflushed + units > UNFLUSHED_CAP) return "flush";
    return "ok";
  }

  /**
   * Sends what is pending (and reads the month figures asked for) in one pipeline; resolves
   * once Redis has answered. `rereadAll`: also reads every month figure known here (a counter
   * set from outside, as tests do).
   */
  async flush(rereadAll = false): Promise<void> {
    if (rereadAll) for (const key of this.known.keys()) this.reread.add(key);
    while (this.flushing !== null) await this.flushing;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.size === 0 && this.reread.size === 0) return;
    this.flushing = this.send().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async send(): Promise<void> {
    const counts = [...this.pending.values()];
    this.pending = new Map();
    const reads = [...this.reread];
    this.reread.clear();
    const pipeline = this.redis.multi();
    for (const c of counts) {
      pipeline.incrby(c.month, c.n).expire(c.month, MONTH_TTL_S, "NX");
      pipeline.incrby(c.day, c.n).expire(c.day, DAY_TTL_S, "NX");
    }
    for (const key of reads) pipeline.get(key);
    let replies: [Error | null, unknown][] | null = null;
    try {
      replies = await pipeline.exec();
    } catch {
      replies = null;
    }
    for (const c of counts) this.unflushed.set(c.ws, (this.unflushed.get(c.ws) ?? 0) - c.n);
    for (const [ws, n] of this.unflushed) if (n <= 0) this.unflushed.delete(ws);
    if (replies === null || replies.some(([err]) => err !== null)) {
      // Which commands ran is unknown only when Redis fails part-way; a whole failure (the
      // usual outage) ran none. The limiter keeps them for Redis's return.
      this.onDown(counts);
      for (const key of reads) this.known.delete(key);
      return;
    }
    counts.forEach((c, i) => {
      const month = Number(replies?.[i * 4]?.[1]);
      this.keep(c.month, month);
      this.onFigure(c.ws, month);
    });
    reads.forEach((key, i) => {
      this.keep(key, Number(replies?.[counts.length * 4 + i]?.[1] ?? 0));
    });
  }

  /** `utcPeriods`, made once a UTC day (the call's path asks on every call). */
  private periods(now: number): { month: string; day: string } {
    const today = this.today;
    if (now >= today.from && now < today.until) return today;
    const from = now - (now % 86_400_000);
    this.today = { from, until: from + 86_400_000, ...utcPeriods(now) };
    return this.today;
  }

  private keep(monthKey: string, figure: number): void {
    if (this.known.size > 100_000) this.known.delete(this.known.keys().next().value as string);
    this.known.set(monthKey, figure);
  }

  get idle(): boolean {
    return this.pending.size === 0 && this.flushing === null;
  }
}
