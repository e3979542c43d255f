import type { Job, QueueCounts, SettleAction } from "@prim/wire";
import { notFound, ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import { prefixedId, randomToken } from "../../core/ids.js";
import { ITEM_OVERHEAD_BYTES, ResponseBudget } from "../../core/response-budget.js";
import { GroupCommit } from "../../sqlite/group-commit.js";
import { transactionRunner } from "../../sqlite/sqlite.js";
import type { ChangeLog } from "../changes/log.js";
import { backoffMs, DEFAULT_MAX_ATTEMPTS, MAX_DEDUPE_KEY, MAX_ERROR_CHARS } from "./limits.js";
import { SCHEMA } from "./schema.js";
import { type JobRow, type JobStatus, prepareStatements, type QueueStatements, rowOf } from "./statements.js";

export type { Job, JobStatus, QueueCounts, SettleAction };

export interface SendResult {
  job: Job;
  deduplicated: boolean;
}

export interface SettleRequest {
  job: string;
  token: string;
  action: SettleAction;
  inMs?: number | undefined;
  error?: string | undefined;
}

export interface SendRequest {
  /** The body as stored (JSON text). */
  body: string;
  /** The body as given, answered as is (else `body` is parsed back). */
  value?: unknown;
  delayMs: number;
  priority: number;
  maxAttempts: number;
  dedupeKey: string | null;
}

function toJob(row: JobRow, withToken = false): Job {
  const job: Job = {
    id: row.id,
    queue: row.queue,
    body: JSON.parse(row.body),
    status: row.status,
    priority: row.priority,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    available_at: row.available_at,
    lease_expires_at: row.status === "leased" ? row.lease_expires_at : null,
    last_error: row.last_error,
    dedupe_key: row.dedupe_key,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
  if (withToken && row.lease_token !== null) job.lease_token = row.lease_token;
  return job;
}

/** A job's answer bytes besides its body, at most (last_error and dedupe_key at their limits). */
const JOB_FIELDS_BYTES = ITEM_OVERHEAD_BYTES + MAX_ERROR_CHARS + MAX_DEDUPE_KEY;

/** Lease tokens name the delivery they belong to, so a stale one is told apart from a wrong one. */
function newLeaseToken(delivery: number): string {
  return `${delivery}.${randomToken(16)}`;
}

/**
 * Jobs of every queue of one queue primitive, in its SQLite file. All writes go through group
 * commit; a lease that ran out is turned back into a ready (or dead) job by `reap`, which every
 * operation runs first, so the state read is always the state at the clock's `now`.
 */
export class QueueStore {
  private readonly commit: GroupCommit;
  /** Runs work in a transaction (a savepoint inside the group commit's). */
  private readonly inTx: <T>(work: () => T) => T;
  private readonly stmts: QueueStatements;
  /** Called after a commit that may have made jobs of `queue` ready (long-poll wake-up). */
  onReady: (queue: string) => void = () => {};
  private notified = new Set<string>();
  /** Queues known to have their row in `queues` (a cache; rows are never deleted). */
  private readonly knownQueues = new Set<string>();

  constructor(
    private readonly db: Database.Database,
    readonly clock: Clock,
    /** The primitive's change log: `send`, `ack`, `retry`, `dead`, `requeue`, `purge` (leases are not changes). */
    private readonly changes: ChangeLog,
  ) {
    this.inTx = transactionRunner(db);
    db.exec(SCHEMA);
    this.commit = new GroupCommit(db);
    this.stmts = prepareStatements(db);
  }

  /** Turns leases that ran out into ready jobs (or dead ones, when attempts are exhausted). */
  reap(): void {
    const now = this.clock.now();
    if (this.stmts.anyExpired.get(now) === undefined) return;
    // A job a lease's end killed is a change, recorded in the same transaction.
    const reap = () =>
      this.stmts.reap.all(now, now).forEach(({ queue, id, status }) => {
        if (status === "dead") this.changes.append("dead", id, { extra: { queue } });
        this.notify(queue);
      });
    this.db.inTransaction ? reap() : this.inTx(reap);
  }

  /**
   * Tells `onReady` about `queue` once the current synchronous work is over — after the commit
   * that is running, since group commit flushes synchronously.
   */
  private notify(queue: string): void {
    if (this.notified.size === 0) {
      queueMicrotask(() => {
        const queues = [...this.notified];
        this.notified.clear();
        for (const q of queues) this.onReady(q);
      });
    }
    this.notified.add(queue);
  }

  /** Writes `work` in the next group commit, after reaping expired leases. */
  private write<T>(work: (now: number) => T): Promise<T> {
    return this.commit
      .run(() => {
        this.reap();
        return work(this.clock.now());
      })
      .catch((err: unknown) => {
        // A commit that failed took its queue rows with it: forget what the cache learnt.
        if (!(err instanceof ServiceError)) this.knownQueues.clear();
        throw err;
      });
  }

  send(queue: string, req: SendRequest): Promise<SendResult> {
    return this.write((now) => this.sendNow(queue, req, now));
  }

  /**
   * Sends every request in one transaction, all or nothing: a savepoint inside the group
   * commit, so a failure midway (or the process dying) leaves none of them. A dedupe key
   * repeated within the batch answers the job its first use made.
   */
  sendMany(queue: string, reqs: readonly SendRequest[]): Promise<SendResult[]> {
    return this.write((now) => this.atomically(() => reqs.map((req) => this.sendNow(queue, req, now))));
  }

  sendNow(queue: string, req: SendRequest, now: number): SendResult {
    if (req.dedupeKey !== null) {
      const existing = this.stmts.byDedupe.get(queue, req.dedupeKey);
      if (existing !== undefined) return { job: toJob(existing), deduplicated: true };
    }
    return { job: this.insert(queue, req, now), deduplicated: false };
  }

  /** Inserts a ready job and answers it as stored, without reading the row back. */
  private insert(queue: string, req: SendRequest, now: number): Job {
    this.touchQueue(queue, now);
    this.notify(queue);
    const job: Job = {
      id: prefixedId("job", now),
      queue,
      body: req.value === undefined ? JSON.parse(req.body) : req.value,
      status: "ready",
      priority: req.priority,
      attempts: 0,
      max_attempts: req.maxAttempts,
      available_at: now + req.delayMs,
      lease_expires_at: null,
      last_error: null,
      dedupe_key: req.dedupeKey,
      created_at: now,
      updated_at: now,
    };
    this.stmts.insert.run({ ...job, body: req.body, now });
    this.changes.append("send", job.id, { size: Buffer.byteLength(req.body), extra: { queue } });
    return job;
  }

  /** Records a queue's name once; later sends skip the statement. */
  private touchQueue(queue: string, now: number): void {
    if (this.knownQueues.has(queue)) return;
    this.stmts.touchQueue.run(queue, now);
    this.knownQueues.add(queue);
  }

  /**
   * Leases up to `max` ready jobs, synchronously (inside a commit). Jobs past the response
   * budget are left ready, not leased: a receive answers fewer than `max` rather than hold
   * leases on jobs it cannot hand over.
   */
  leaseNow(queue: string, max: number, leaseMs: number): Job[] {
    const now = this.clock.now();
    const jobs: Job[] = [];
    const budget = new ResponseBudget();
    const rows = this.stmts.ready(max).all(queue, now);
    for (const row of rows) {
      if (!budget.take(JOB_FIELDS_BYTES + row.size)) break;
      const delivery = row.deliveries + 1;
      const leased = this.stmts.lease.get(
        delivery,
        leaseMs,
        newLeaseToken(delivery),
        now + leaseMs,
        now,
        row.seq,
        row.deliveries,
      );
      if (leased !== undefined) jobs.push(toJob(rowOf(leased), true));
    }
    return jobs;
  }

  /** Runs `work` in the next group commit (the long-poll waiters lease through this). */
  inCommit<T>(work: () => T): Promise<T> {
    return this.write(() => work());
  }

  receive(queue: string, max: number, leaseMs: number): Promise<Job[]> {
    return this.write(() => this.leaseNow(queue, max, leaseMs));
  }

  /** The job's row; 404 when the queue has no such job. */
  private row(queue: string, jobId: string): JobRow {
    const raw = this.stmts.byId.get(jobId, queue);
    if (raw === undefined) throw notFound(`job '${jobId}' in queue '${queue}'`);
    return rowOf(raw);
  }

  /** The job if `token` holds its current, unexpired lease; else the error the spec names. */
  private leased(queue: string, jobId: string, token: string, now: number): JobRow {
    const row = this.row(queue, jobId);
    if (row.lease_token === token) {
      if (row.status === "leased" && (row.lease_expires_at ?? 0) > now) return row;
      // The lease this token held ran out (the job went back to ready, or died).
      throw new ServiceError("lease_expired", `the lease on job '${jobId}' ran out before this call`);
    }
    const delivery = Number.parseInt(token.split(".")[0] ?? "", 10);
    if (Number.isSafeInteger(delivery) && delivery >= 1 && delivery < row.deliveries) {
      throw new ServiceError("lease_expired", `the lease on job '${jobId}' ended; the job was delivered again since`);
    }
    if (Number.isSafeInteger(delivery) && delivery === row.deliveries && row.lease_token === null) {
      throw new ServiceError("conflict", `job '${jobId}' was already settled (status ${row.status})`);
    }
    throw new ServiceError("conflict", `lease_token does not hold the lease on job '${jobId}'`);
  }

  settle(queue: string, req: SettleRequest): Promise<Job> {
    return this.write((now) => this.settleNow(queue, req, now));
  }

  /**
   * Settles each request on its own, in one commit: an entry refused (its lease ran out, a
   * wrong token, no such job) answers its error and wrote nothing; the others are settled. A
   * system fault (SQLite failing) fails the whole call, with none of its settles written.
   */
  settleMany(queue: string, reqs: readonly SettleRequest[]): Promise<(Job | ServiceError)[]> {
    return this.write((now) =>
      this.atomically(() =>
        reqs.map((req) => {
          try {
            return this.settleNow(queue, req, now);
          } catch (err) {
            if (err instanceof ServiceError) return err;
            throw err;
          }
        }),
      ),
    );
  }

  /** Checks the lease before it writes anything, so a refused settle leaves no trace. */
  private settleNow(queue: string, req: SettleRequest, now: number): Job {
    const { action, inMs, error } = req;
    const row = this.leased(queue, req.job, req.token, now);
    const lastError = error === undefined ? row.last_error : error.slice(0, MAX_ERROR_CHARS);
    let status: JobStatus = "done";
    let availableAt = row.available_at;
    if (action === "dead") status = "dead";
    else if (action === "retry" || action === "fail") {
      status = row.attempts >= row.max_attempts ? "dead" : "ready";
      availableAt = now + (inMs ?? backoffMs(row.attempts));
    }
    const settled: JobRow = {
      ...row,
      status,
      available_at: availableAt,
      last_error: lastError,
      lease_token: null,
      lease_expires_at: null,
      updated_at: now,
    };
    this.stmts.settle.run({ status, available_at: availableAt, last_error: lastError, now, seq: row.seq });
    this.changes.append(status === "done" ? "ack" : status === "dead" ? "dead" : "retry", row.id, { extra: { queue } });
    if (status === "ready") this.notify(queue);
    return toJob(settled);
  }

  heartbeat(queue: string, jobId: string, token: string, extendMs: number | undefined): Promise<Job> {
    return this.write((now) => {
      const row = this.leased(queue, jobId, token, now);
      const leaseMs = extendMs ?? row.lease_ms ?? 0;
      return toJob(rowOf(this.stmts.heartbeat.get(now + leaseMs, leaseMs, now, row.seq) as unknown[]), true);
    });
  }

  requeue(queue: string, jobId: string): Promise<Job> {
    return this.write((now) => {
      const row = this.row(queue, jobId);
      if (row.status !== "dead") {
        throw new ServiceError("conflict", `job '${jobId}' is ${row.status}; only a dead job can be requeued`);
      }
      if (row.dedupe_key !== null && this.stmts.byDedupe.get(queue, row.dedupe_key) !== undefined) {
        throw new ServiceError(
          "conflict",
          `a pending job in queue '${queue}' already has dedupe_key '${row.dedupe_key}'`,
        );
      }
      this.notify(queue);
      this.changes.append("requeue", row.id, { extra: { queue } });
      return toJob(rowOf(this.stmts.requeue.get(now, now, row.seq) as unknown[]));
    });
  }

  purge(queue: string, status: "done" | "dead", olderThanMs: number): Promise<number> {
    return this.write((now) => {
      const purged = this.stmts.purge.run(queue, status, now - olderThanMs).changes;
      if (purged > 0) this.changes.append("purge", queue, { extra: { queue, status, jobs: purged } });
      return purged;
    });
  }

  get(queue: string, jobId: string): Job {
    this.reap();
    const row = this.row(queue, jobId);
    return toJob(row);
  }

  /**
   * Jobs in send order after `afterSeq`; `limit + 1` rows so the caller can tell a next page.
   * The rows stop where the next one would not fit `budget` (`budget.cut` tells).
   */
  list(
    queue: string,
    status: JobStatus | undefined,
    afterSeq: number,
    limit: number,
    budget: ResponseBudget = new ResponseBudget(),
  ): (Job & { seq: number })[] {
    this.reap();
    // Stepped one row at a time, so bodies past the budget are never read.
    const rows =
      status === undefined
        ? this.stmts.list.iterate(queue, afterSeq, limit + 1)
        : status === "done" || status === "dead"
          ? this.stmts.listFinished.iterate(queue, status, afterSeq, limit + 1)
          : this.stmts.listPending.iterate(queue, status, afterSeq, limit + 1);
    const out: (Job & { seq: number })[] = [];
    for (const { size, ...row } of rows) {
      if (!budget.take(JOB_FIELDS_BYTES + size)) break;
      out.push({ ...toJob(row), seq: row.seq });
    }
    return out;
  }

  counts(): QueueCounts[] {
    this.reap();
    const byQueue = new Map<string, QueueCounts>();
    for (const { name } of this.stmts.queues.all()) {
      byQueue.set(name, { name, ready: 0, delayed: 0, leased: 0, done: 0, dead: 0 });
    }
    for (const row of this.stmts.counts.all(this.clock.now())) {
      const counts = byQueue.get(row.queue);
      if (counts === undefined) continue;
      counts[row.status] = row.n;
      if (row.status === "ready") counts.delayed = row.delayed;
    }
    return [...byQueue.values()];
  }

  /** Makes every leased job ready again, attempts kept (a fork's copy). */
  releaseLeases(): void {
    const now = this.clock.now();
    this.stmts.releaseLeases.run(now, now);
  }

  /** PrimitiveStats items: pending (ready or leased) jobs. */
  pendingCount(): number {
    this.reap();
    return this.stmts.pending.get()?.n ?? 0;
  }

  /** When the next job of `queue` becomes ready by time alone (a delay or a lease running out). */
  nextEventAt(queue: string): number | null {
    return this.stmts.nextEvent.get(queue, this.clock.now(), queue)?.at ?? null;
  }

  subscribe(topic: string, queue: string): Promise<{ created: boolean; created_at: number }> {
    return this.write((now) => {
      this.touchQueue(queue, now);
      const inserted = this.stmts.subscribe.get(topic, queue, now);
      if (inserted !== undefined) return { created: true, created_at: inserted.created_at };
      return { created: false, created_at: this.stmts.subscription.get(topic, queue)?.created_at ?? now };
    });
  }

  unsubscribe(topic: string, queue: string): Promise<void> {
    return this.write(() => {
      if (this.stmts.unsubscribe.run(topic, queue).changes === 0) {
        throw notFound(`subscription of queue '${queue}' to topic '${topic}'`);
      }
    });
  }

  /** One job in each subscribed queue, all in the same commit. */
  publish(topic: string, body: string): Promise<{ delivered: number; queues: string[] }> {
    return this.publishMany(topic, [body]);
  }

  /** Each body to every subscribed queue, in one transaction (all or nothing). */
  publishMany(topic: string, bodies: readonly string[]): Promise<{ delivered: number; queues: string[] }> {
    return this.write((now) => {
      const queues = this.stmts.subscribers.all(topic).map((s) => s.queue);
      this.atomically(() => {
        for (const body of bodies) {
          for (const queue of queues) {
            const req = { body, delayMs: 0, priority: 0, maxAttempts: DEFAULT_MAX_ATTEMPTS, dedupeKey: null };
            this.insert(queue, req, now);
          }
        }
      });
      return { delivered: queues.length, queues };
    });
  }

  /** Runs `work` in a savepoint of the current commit: it writes all of its rows or none. */
  private atomically<T>(work: () => T): T {
    return this.inTx(work);
  }
}
