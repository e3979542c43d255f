import type { WorkspaceEngines } from "@prim/cells";
import { addPrimitiveUsage, type DayUsage, rollUpUsage } from "@prim/db";
import type pg from "pg";
import { utcPeriods } from "./fallback.js";
import type { RedisLimiter } from "./limiter.js";

/**
 * The limiter's two clocks (CLOUD.md, "Limits and metering"): every `gaugeMs` each open
 * workspace's storage is measured into Redis, so a Starter workspace crossing 5 GB is refused
 * within that bound (plus the write in flight); every `rollUpMs` the day's counters go to
 * Postgres `usage_daily`.
 */
export class Metering {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly storage = new Map<string, number>();
  /** When the last roll-up ran: the first one of a new UTC day also closes the day before. */
  private lastRollUp: number | null = null;

  constructor(
    private readonly limiter: RedisLimiter,
    private readonly tenants: WorkspaceEngines,
    private readonly pool: pg.Pool,
    private readonly options: { gaugeMs?: number; rollUpMs?: number; now?: () => number } = {},
  ) {}

  start(): void {
    const every = (ms: number, fn: () => Promise<void>) => {
      const timer = setInterval(() => void fn().catch((err) => console.warn("metering:", err)), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.gaugeMs ?? 10_000, () => this.measureStorage());
    every(this.options.rollUpMs ?? 60_000, () => this.rollUp());
  }

  /** Measures every open workspace's storage and hands it to the limiter. */
  async measureStorage(): Promise<void> {
    // A workspace held here (moving, or moved to another cell) is that cell's to measure.
    for (const ws of this.storage.keys()) if (this.tenants.isFrozen(ws)) this.storage.delete(ws);
    for (const ws of this.tenants.openWorkspaces()) {
      const engine = this.tenants.openEngine(ws);
      if (engine === undefined) continue;
      const bytes = await engine.storageBytes();
      this.storage.set(ws, bytes);
      await this.limiter.setStorage(ws, bytes);
    }
  }

  /**
   * Writes today's figures of every workspace seen here to `usage_daily`. The first roll-up of
   * a UTC day also writes the previous day's final counts (the calls between that day's last
   * roll-up and midnight), so a completed day in `usage_daily` is whole — billing reads it.
   */
  async rollUp(): Promise<void> {
    const now = this.options.now?.() ?? Date.now();
    // Counted in this process, not in Redis: written whether Redis answers or not.
    await this.addPrimitiveCounts().catch((err) => console.warn("metering: per-primitive counts kept:", err));
    const previous = this.lastRollUp;
    const days = [now];
    if (previous !== null && now - previous < 86_400_000 && utcPeriods(previous).day !== utcPeriods(now).day) {
      days.unshift(previous);
    }
    const rows: DayUsage[] = [];
    for (const ws of new Set([...this.limiter.active, ...this.storage.keys()])) {
      for (const at of days) {
        const ops = await this.limiter.operations(ws, at);
        if (ops === null) return; // Redis is away: the next minute writes what it has then
        const { day } = utcPeriods(at);
        const iso = `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`;
        rows.push({ workspace: ws, day: iso, operations: ops.day, storageBytes: this.storage.get(ws) ?? 0 });
      }
    }
    await rollUpUsage(this.pool, rows);
    this.limiter.active.clear();
    this.lastRollUp = now;
  }

  /**
   * Adds the operations per primitive counted here since the last roll-up (they do not depend on
   * Redis); what Postgres does not take is counted again and written next minute.
   */
  private async addPrimitiveCounts(): Promise<void> {
    const counted = this.limiter.perPrimitive.drain();
    const iso = (day: string) => `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`;
    try {
      await addPrimitiveUsage(
        this.pool,
        counted.map((r) => ({ ...r, day: iso(r.day) })),
      );
    } catch (err) {
      for (const r of counted) this.limiter.perPrimitive.add(r.workspace, r.primitive, r.operations, r.day);
      throw err;
    }
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }
}
