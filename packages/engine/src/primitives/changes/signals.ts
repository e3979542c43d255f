/**
 * Wakes change-feed readers parked on a primitive (a long poll, an SSE stream) when its log gets
 * an entry — after the commit, never on a timer. A reader parks with the primitives it follows
 * and is resolved on the first commit to any of them, at its deadline, or when its caller leaves.
 */
interface Parked {
  ids: ReadonlySet<string> | null;
  done(): void;
}

export class ChangeSignals {
  private readonly parked = new Set<Parked>();
  /** Set once the engine closes: nothing parks any more. */
  closed = false;

  /** Called by a primitive's log once a transaction that appended to it ended. */
  committed(primitiveId: string): void {
    for (const p of [...this.parked]) if (p.ids === null || p.ids.has(primitiveId)) p.done();
  }

  /**
   * Resolves on the next commit to one of `ids` (null: any primitive of this engine; a group
   * reader filters), after `waitMs`, or when `signal` aborts; true when woken by a commit.
   */
  wait(ids: ReadonlySet<string> | null, waitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (waitMs <= 0 || signal?.aborted || this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const finish = (woken: boolean) => {
        if (!this.parked.delete(entry)) return;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(woken);
      };
      const onAbort = () => finish(false);
      const entry: Parked = { ids, done: () => finish(true) };
      const timer = setTimeout(() => finish(false), waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.parked.add(entry);
    });
  }

  /** How many readers are parked (tests wait on this instead of sleeping). */
  get waiting(): number {
    return this.parked.size;
  }

  /** Answers every parked reader (the engine is closing). */
  close(): void {
    this.closed = true;
    for (const p of [...this.parked]) p.done();
  }
}
