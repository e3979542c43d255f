/** Time source of the engine. Tests move a ManualClock instead of sleeping. */
export interface Clock {
  now(): number;
  /**
   * Runs `fn` once the clock reaches `at` (ms); returns a function that cancels it. Engine
   * timers that depend on engine time (queue delays and leases) use this, so a test that moves
   * a ManualClock fires them without waiting.
   */
  at(at: number, fn: () => void): () => void;
}

/** setTimeout's delay is a signed 32-bit number of ms; longer timers re-arm. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  at(at, fn) {
    let handle: NodeJS.Timeout;
    const arm = () => {
      const wait = at - Date.now();
      if (wait <= 0) return fn();
      handle = setTimeout(arm, Math.min(wait, MAX_TIMEOUT_MS));
      handle.unref();
    };
    arm();
    return () => clearTimeout(handle);
  },
};

export class ManualClock implements Clock {
  private current: number;
  private timers: { at: number; fn: () => void }[] = [];

  constructor(start: number = Date.now()) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  at(at: number, fn: () => void): () => void {
    const timer = { at, fn };
    if (at <= this.current) {
      queueMicrotask(fn);
      return () => {};
    }
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  advance(ms: number): void {
    this.set(this.current + ms);
  }

  set(ms: number): void {
    this.current = ms;
    const due = this.timers.filter((t) => t.at <= ms).sort((a, b) => a.at - b.at);
    this.timers = this.timers.filter((t) => t.at > ms);
    for (const timer of due) timer.fn();
  }
}
