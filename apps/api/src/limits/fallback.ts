/**
 * What limits while Redis does not answer (CLOUD.md: requests still succeed): this process's
 * share of each credential's bucket, operation counts kept here until Redis takes them back, and
 * the caps decided on figures re-read from Postgres every refresh interval.
 */
export class LocalBuckets {
  private readonly buckets = new Map<string, { tokens: number; ts: number }>();

  /** Takes a token from `who`'s bucket; answers the seconds to wait when it is empty. */
  take(
    who: string,
    now: number,
    rate: number,
    burst: number,
  ): { ok: true; left: number } | { ok: false; retryAfter: number } {
    const b = this.buckets.get(who) ?? { tokens: burst, ts: now };
    const tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.ts) * rate) / 1000);
    if (tokens < 1) return { ok: false, retryAfter: Math.max(1, Math.ceil((1 - tokens) / rate)) };
    this.buckets.set(who, { tokens: tokens - 1, ts: Math.max(now, b.ts) });
    if (this.buckets.size > 100_000) this.buckets.delete(this.buckets.keys().next().value as string);
    return { ok: true, left: Math.floor(tokens - 1) };
  }
}

/** Operation counts per counter key, to be added to Redis when it is back. */
export class PendingCounts {
  private readonly counts = new Map<string, number>();

  add(key: string, n = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }

  /** Takes every count out (the caller puts back what it could not write). */
  drain(): [string, number][] {
    const all = [...this.counts];
    this.counts.clear();
    return all;
  }

  get size(): number {
    return this.counts.size;
  }
}

/**
 * Operations per primitive per UTC day counted in this process since the last roll-up (the usage
 * page's busiest primitives): Map updates on the call's path (the day's name is made once a
 * day), no Redis command; the minute's roll-up takes them out and adds them to Postgres
 * (`usage_primitive_daily`).
 */
export class PrimitiveCounts {
  /** day (`YYYYMMDD`) → workspace → primitive → operations. */
  private readonly counts = new Map<string, Map<string, Map<string, number>>>();
  private day = { from: 0, until: 0, name: "" };

  /** Counts `n` operations on `primitive` at `now` (ms), or on the day named (`YYYYMMDD`). */
  add(workspace: string, primitive: string, n: number, at: number | string): void {
    let day: string;
    if (typeof at === "string") day = at;
    else {
      if (at < this.day.from || at >= this.day.until) {
        const from = at - (at % 86_400_000);
        this.day = { from, until: from + 86_400_000, name: utcPeriods(at).day };
      }
      day = this.day.name;
    }
    let byWorkspace = this.counts.get(day);
    if (byWorkspace === undefined) {
      byWorkspace = new Map();
      this.counts.set(day, byWorkspace);
    }
    let byPrimitive = byWorkspace.get(workspace);
    if (byPrimitive === undefined) {
      byPrimitive = new Map();
      byWorkspace.set(workspace, byPrimitive);
    }
    byPrimitive.set(primitive, (byPrimitive.get(primitive) ?? 0) + n);
  }

  /** Takes every count out as rows (`day` as `YYYYMMDD`); the caller puts back what it could not write. */
  drain(): { workspace: string; day: string; primitive: string; operations: number }[] {
    const rows: { workspace: string; day: string; primitive: string; operations: number }[] = [];
    for (const [day, byWorkspace] of this.counts) {
      for (const [workspace, byPrimitive] of byWorkspace) {
        for (const [primitive, operations] of byPrimitive) rows.push({ workspace, day, primitive, operations });
      }
    }
    this.counts.clear();
    return rows;
  }
}

/** A credential's bucket shared by `processes` api processes: each may take its part at once. */
export function bucketShare(rate: number, burst: number, processes: number): { rate: number; burst: number } {
  const n = Math.max(1, processes);
  return { rate: rate / n, burst: Math.max(1, Math.ceil(burst / n)) };
}

/**
 * A figure read from Postgres, read again once it is older than the interval on the limiter's
 * clock (checked when asked, so a moved test clock drives it). Calls that ask while it is being
 * read share that read. A failed read keeps the last figure (or `initial`) until the next
 * interval, so a Postgres that is away too is not asked on every call; a failed first read
 * without `initial` is the caller's error.
 */
export class Refreshed<T> {
  private value: { figure: T; at: number } | undefined;
  private reading: Promise<T> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    initial?: T,
  ) {
    if (initial !== undefined) this.value = { figure: initial, at: Number.NEGATIVE_INFINITY };
  }

  /** Keeps `figure` as read at `at` (a read made elsewhere). */
  keep(figure: T, at: number): void {
    this.value = { figure, at };
  }

  async get(now: number, maxAgeMs: number): Promise<T> {
    const last = this.value;
    if (last !== undefined && now - last.at < maxAgeMs) return last.figure;
    this.reading ??= this.read()
      .then(
        (figure) => {
          this.value = { figure, at: now };
          return figure;
        },
        (err) => {
          if (last === undefined) throw err;
          this.value = { figure: last.figure, at: now };
          return last.figure;
        },
      )
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}

/** `YYYYMM` and `YYYYMMDD` of an instant, in UTC (the script's month and day keys). */
export function utcPeriods(ms: number): { month: string; day: string } {
  const iso = new Date(ms).toISOString();
  const month = iso.slice(0, 4) + iso.slice(5, 7);
  return { month, day: month + iso.slice(8, 10) };
}
