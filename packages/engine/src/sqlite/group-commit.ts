import type Database from "better-sqlite3";

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  value?: unknown;
  error?: unknown;
  failed?: boolean;
}

/**
 * Group commit: writes that arrive in the same turn of the event loop run in one SQLite
 * transaction, so concurrent writers share a single commit (one WAL append) instead of paying
 * for one each. Each job still succeeds or fails on its own: a job that throws has written
 * nothing (jobs either throw before writing or run inside their own savepoint), and callers
 * are answered only after the shared commit, so an acknowledged write is committed.
 */
export class GroupCommit {
  private queue: Job[] = [];
  /** The batch's transaction, made once (better-sqlite3 builds four wrappers per `transaction` call). */
  private readonly runAll: (jobs: Job[]) => void;

  constructor(db: Database.Database) {
    this.runAll = db.transaction((jobs: Job[]) => {
      for (const job of jobs) {
        try {
          job.value = job.work();
        } catch (err) {
          // SQLite rolled the whole transaction back itself (SQLITE_FULL, an I/O error):
          // nothing of this batch is written; every job fails with the real cause.
          if (!db.inTransaction) throw err;
          job.failed = true;
          job.error = err;
        }
      }
    });
  }

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private flush(): void {
    const jobs = this.queue;
    this.queue = [];
    try {
      this.runAll(jobs);
    } catch (err) {
      // The commit failed (disk full, I/O error), here or inside a job: nothing of this batch
      // was written.
      for (const job of jobs) job.reject(err);
      return;
    }
    for (const job of jobs) {
      if (job.failed) job.reject(job.error);
      else job.resolve(job.value);
    }
  }
}
