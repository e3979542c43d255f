import type { JobStatus } from "@prim/wire";
import type Database from "better-sqlite3";

export type { JobStatus };

/** A row of the jobs table (schema.ts). */
export interface JobRow {
  seq: number;
  id: string;
  queue: string;
  body: string;
  status: JobStatus;
  priority: number;
  attempts: number;
  max_attempts: number;
  deliveries: number;
  available_at: number;
  lease_ms: number | null;
  lease_expires_at: number | null;
  lease_token: string | null;
  dedupe_key: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * A ready job's position, delivery count and body size (only what leasing needs: wide rows
 * cost ~0.5 µs a column; the size keeps a receive within the response budget).
 */
export type ReadyRow = Pick<JobRow, "seq" | "deliveries"> & { size: number };

/** A listed job with its body's stored size. */
export type ListedRow = JobRow & { size: number };

/** The queue store's prepared statements (spelled out: declarations cannot name the inferred type). */
export interface QueueStatements {
  byId: Database.Statement<[string, string], unknown[]>;
  byDedupe: Database.Statement<[string, string], JobRow>;
  insert: Database.Statement<unknown[], unknown>;
  touchQueue: Database.Statement<unknown[], unknown>;
  /** Up to `max` ready jobs in lease order; one statement per `max`, prepared on first use. */
  ready: (max: number) => Database.Statement<[string, number], ReadyRow>;
  lease: Database.Statement<[number, number, string, number, number, number, number], unknown[]>;
  releaseLeases: Database.Statement<[number, number], void>;
  anyExpired: Database.Statement<[number], { seq: number }>;
  reap: Database.Statement<[number, number], { queue: string; id: string; status: string }>;
  settle: Database.Statement<object, void>;
  heartbeat: Database.Statement<[number, number, number, number], unknown[]>;
  requeue: Database.Statement<[number, number, number], unknown[]>;
  purge: Database.Statement<[string, string, number], void>;
  list: Database.Statement<[string, number, number], ListedRow>;
  listPending: Database.Statement<[string, string, number, number], ListedRow>;
  listFinished: Database.Statement<[string, string, number, number], ListedRow>;
  queues: Database.Statement<[], { name: string }>;
  counts: Database.Statement<[number], { queue: string; status: JobStatus; n: number; delayed: number }>;
  pending: Database.Statement<[], { n: number }>;
  nextEvent: Database.Statement<[string, number, string], { at: number | null }>;
  subscribers: Database.Statement<[string], { queue: string }>;
  subscribe: Database.Statement<[string, string, number], { created_at: number }>;
  subscription: Database.Statement<[string, string], { created_at: number }>;
  unsubscribe: Database.Statement<[string, string], void>;
}

/**
 * Column order of `jobs` (schema.ts), which `RETURNING *` follows. Hot statements return rows as
 * arrays (`raw()`): better-sqlite3 builds a 17-property object about three times slower.
 */
export function rowOf(a: unknown[]): JobRow {
  return {
    seq: a[0],
    id: a[1],
    queue: a[2],
    body: a[3],
    status: a[4],
    priority: a[5],
    attempts: a[6],
    max_attempts: a[7],
    deliveries: a[8],
    available_at: a[9],
    lease_ms: a[10],
    lease_expires_at: a[11],
    lease_token: a[12],
    dedupe_key: a[13],
    last_error: a[14],
    created_at: a[15],
    updated_at: a[16],
  } as JobRow;
}

export function prepareStatements(db: Database.Database): QueueStatements {
  const raw = <P extends unknown[] | object>(sql: string): Database.Statement<P, unknown[]> =>
    db.prepare<P, unknown[]>(sql).raw() as unknown as Database.Statement<P, unknown[]>;
  const prep = <P extends unknown[] | object = unknown[], R = unknown>(sql: string): Database.Statement<P, R> =>
    db.prepare<P, R>(sql);
  const readyByMax = new Map<number, Database.Statement<[string, number], ReadyRow>>();
  return {
    byId: raw<[string, string]>("SELECT * FROM jobs WHERE id = ? AND queue = ?"),
    byDedupe: prep<[string, string], JobRow>(
      "SELECT * FROM jobs WHERE queue = ? AND dedupe_key = ? AND status IN ('ready', 'leased')",
    ),
    insert: prep(
      `INSERT INTO jobs (id, queue, body, status, priority, attempts, max_attempts, deliveries, available_at,
         dedupe_key, created_at, updated_at)
       VALUES (@id, @queue, @body, 'ready', @priority, 0, @max_attempts, 0, @available_at, @dedupe_key, @now, @now)`,
    ),
    touchQueue: prep("INSERT OR IGNORE INTO queues (name, created_at) VALUES (?, ?)"),
    // A literal LIMIT: with a bound one SQLite cannot plan the ORDER BY as a walk of jobs_ready
    // that stops after `max` rows (measured 4x slower).
    ready: (max: number) => {
      let stmt = readyByMax.get(max);
      if (stmt === undefined) {
        stmt = prep<[string, number], ReadyRow>(
          `SELECT seq, deliveries, octet_length(body) AS size FROM jobs WHERE queue = ? AND status = 'ready' AND available_at <= ?
           ORDER BY priority DESC, available_at, seq LIMIT ${Math.trunc(max)}`,
        );
        readyByMax.set(max, stmt);
      }
      return stmt;
    },
    lease: raw<[number, number, string, number, number, number, number]>(
      `UPDATE jobs SET status = 'leased', attempts = attempts + 1, deliveries = ?, lease_ms = ?,
         lease_token = ?, lease_expires_at = ?, updated_at = ?
       WHERE seq = ? AND deliveries = ? RETURNING *`,
    ),
    releaseLeases: prep<[number, number], void>(
      `UPDATE jobs SET status = 'ready', lease_token = NULL, lease_expires_at = NULL, available_at = ?, updated_at = ?
       WHERE status = 'leased'`,
    ),
    anyExpired: prep<[number], { seq: number }>(
      "SELECT seq FROM jobs WHERE status = 'leased' AND lease_expires_at <= ? LIMIT 1",
    ),
    reap: prep<[number, number], { queue: string; id: string; status: string }>(
      `UPDATE jobs SET
         status = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,
         last_error = CASE WHEN attempts >= max_attempts
           THEN 'lease expired on the last of ' || max_attempts || ' attempts' ELSE last_error END,
         available_at = lease_expires_at, updated_at = ?
       WHERE status = 'leased' AND lease_expires_at <= ? RETURNING queue, id, status`,
    ),
    settle: prep<object, void>(
      `UPDATE jobs SET status = @status, available_at = @available_at, last_error = @last_error,
         lease_token = NULL, lease_expires_at = NULL, updated_at = @now WHERE seq = @seq`,
    ),
    heartbeat: raw<[number, number, number, number]>(
      "UPDATE jobs SET lease_expires_at = ?, lease_ms = ?, updated_at = ? WHERE seq = ? RETURNING *",
    ),
    requeue: raw<[number, number, number]>(
      `UPDATE jobs SET status = 'ready', attempts = 0, available_at = ?, updated_at = ?, lease_token = NULL
       WHERE seq = ? RETURNING *`,
    ),
    purge: prep<[string, string, number], void>(
      "DELETE FROM jobs WHERE queue = ? AND status IN ('done', 'dead') AND status = ? AND updated_at <= ?",
    ),
    list: prep<[string, number, number], ListedRow>(
      "SELECT *, octet_length(body) AS size FROM jobs WHERE queue = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    listPending: prep<[string, string, number, number], ListedRow>(
      "SELECT *, octet_length(body) AS size FROM jobs INDEXED BY jobs_by_queue WHERE queue = ? AND status = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    // Repeating the partial index's condition lets SQLite use it.
    listFinished: prep<[string, string, number, number], ListedRow>(
      "SELECT *, octet_length(body) AS size FROM jobs INDEXED BY jobs_finished WHERE queue = ? AND status IN ('done', 'dead') AND status = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    queues: prep<[], { name: string }>("SELECT name FROM queues ORDER BY name"),
    counts: prep<[number], { queue: string; status: JobStatus; n: number; delayed: number }>(
      `SELECT queue, status, count(*) AS n, sum(status = 'ready' AND available_at > ?) AS delayed
       FROM jobs GROUP BY queue, status`,
    ),
    // Two counts over the partial indexes rather than a scan of every job.
    pending: prep<[], { n: number }>(
      "SELECT (SELECT count(*) FROM jobs WHERE status = 'ready') + (SELECT count(*) FROM jobs WHERE status = 'leased') AS n",
    ),
    nextEvent: prep<[string, number, string], { at: number | null }>(
      `SELECT min(at) AS at FROM (
         SELECT min(available_at) AS at FROM jobs WHERE queue = ? AND status = 'ready' AND available_at > ?
         UNION ALL SELECT * FROM (SELECT lease_expires_at FROM jobs INDEXED BY jobs_leased
           WHERE status = 'leased' AND queue = ? ORDER BY lease_expires_at LIMIT 1))`,
    ),
    subscribers: prep<[string], { queue: string }>("SELECT queue FROM subscriptions WHERE topic = ? ORDER BY queue"),
    subscribe: prep<[string, string, number], { created_at: number }>(
      "INSERT INTO subscriptions (topic, queue, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING created_at",
    ),
    subscription: prep<[string, string], { created_at: number }>(
      "SELECT created_at FROM subscriptions WHERE topic = ? AND queue = ?",
    ),
    unsubscribe: prep<[string, string], void>("DELETE FROM subscriptions WHERE topic = ? AND queue = ?"),
  };
}
