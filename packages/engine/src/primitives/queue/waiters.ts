import type { Job, QueueStore } from "./store.js";

interface Waiter {
  max: number;
  leaseMs: number;
  resolve(jobs: Job[]): void;
  reject(err: unknown): void;
  /** Ends the wait (deadline timer, abort listener). */
  cleanup(): void;
}

/**
 * Long-polling receivers. A receive that finds nothing parks here; it is answered as soon as a
 * job of its queue becomes ready — a send, a retry or requeue, a delay passing or a lease running
 * out — or with an empty list at its deadline. Nothing polls: sends and settles notify the queue,
 * and time-driven changes arm one clock timer per queue, at the next delay or lease expiry.
 */
export class Waiters {
  private readonly byQueue = new Map<string, Waiter[]>();
  private readonly timers = new Map<string, { at: number; cancel: () => void }>();
  private closed = false;

  constructor(private readonly store: QueueStore) {
    store.onReady = (queue) => this.wake(queue);
  }

  /** Parks a receive for at most `waitMs` of real time; `signal` ends it early (client gone). */
  park(queue: string, max: number, leaseMs: number, waitMs: number, signal?: AbortSignal): Promise<Job[]> {
    if (this.closed || signal?.aborted) return Promise.resolve([]);
    return new Promise<Job[]>((resolve, reject) => {
      const deadline = setTimeout(() => this.leave(queue, waiter, []), waitMs);
      const onAbort = () => this.leave(queue, waiter, []);
      signal?.addEventListener("abort", onAbort, { once: true });
      const waiter: Waiter = {
        max,
        leaseMs,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(deadline);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      const list = this.byQueue.get(queue);
      if (list === undefined) this.byQueue.set(queue, [waiter]);
      else list.push(waiter);
      this.arm(queue);
    });
  }

  /** How many receives are parked on `queue` (tests wait on this instead of sleeping). */
  parked(queue: string): number {
    return this.byQueue.get(queue)?.length ?? 0;
  }

  /** Serves parked receivers of `queue` in arrival order while it has ready jobs. */
  wake(queue: string): void {
    if (!this.byQueue.has(queue)) return;
    const served: [Waiter, Job[]][] = [];
    this.store
      .inCommit(() => {
        const list = this.byQueue.get(queue) ?? [];
        while (list.length > 0) {
          const waiter = list[0] as Waiter;
          const jobs = this.store.leaseNow(queue, waiter.max, waiter.leaseMs);
          if (jobs.length === 0) break;
          list.shift();
          served.push([waiter, jobs]);
        }
        if (list.length === 0) this.byQueue.delete(queue);
      })
      .then(
        () => {
          for (const [waiter, jobs] of served) {
            waiter.cleanup();
            waiter.resolve(jobs);
          }
          this.arm(queue);
        },
        (err: unknown) => {
          for (const [waiter] of served) {
            waiter.cleanup();
            waiter.reject(err);
          }
        },
      );
  }

  /** Answers every parked receiver with nothing (the primitive is closing). */
  close(): void {
    this.closed = true;
    for (const queue of [...this.byQueue.keys()]) {
      for (const waiter of [...(this.byQueue.get(queue) ?? [])]) this.leave(queue, waiter, []);
    }
    for (const timer of this.timers.values()) timer.cancel();
    this.timers.clear();
  }

  private leave(queue: string, waiter: Waiter, jobs: Job[]): void {
    const list = this.byQueue.get(queue);
    const index = list?.indexOf(waiter) ?? -1;
    if (list === undefined || index < 0) return; // already served
    list.splice(index, 1);
    if (list.length === 0) {
      this.byQueue.delete(queue);
      this.disarm(queue);
    }
    waiter.cleanup();
    waiter.resolve(jobs);
  }

  /** Keeps one clock timer per queue with waiters, at its next time-driven change. */
  private arm(queue: string): void {
    if (!this.byQueue.has(queue)) {
      this.disarm(queue);
      return;
    }
    const at = this.store.nextEventAt(queue);
    const current = this.timers.get(queue);
    if (current?.at === at) return;
    current?.cancel();
    this.timers.delete(queue);
    if (at === null) return;
    const cancel = this.store.clock.at(at, () => {
      this.timers.delete(queue);
      this.store.reap();
      this.wake(queue);
      this.arm(queue);
    });
    this.timers.set(queue, { at, cancel });
  }

  private disarm(queue: string): void {
    this.timers.get(queue)?.cancel();
    this.timers.delete(queue);
  }
}
