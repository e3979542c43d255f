import type Database from "better-sqlite3";

export type JobStatus = "ready" | "leased" | "done" | "dead";

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

/** The queue store's prepared statements. */
export function prepareStatements(db: Database.Database) {
  return {
    byId: db.prepare<[string, string], JobRow>("SELECT * FROM jobs WHERE id = ? AND queue = ?"),
    byDedupe: db.prepare<[string, string], JobRow>(
      "SELECT * FROM jobs WHERE queue = ? AND dedupe_key = ? AND status IN ('ready', 'leased')",
    ),
    insert: db.prepare(
      `INSERT INTO jobs (id, queue, body, status, priority, attempts, max_attempts, deliveries, available_at,
         dedupe_key, created_at, updated_at)
       VALUES (@id, @queue, @body, 'ready', @priority, 0, @max_attempts, 0, @available_at, @dedupe_key, @now, @now)
       RETURNING *`,
    ),
    touchQueue: db.prepare("INSERT OR IGNORE INTO queues (name, created_at) VALUES (?, ?)"),
    ready: db.prepare<[string, number, number], JobRow>(
      `SELECT * FROM jobs WHERE queue = ? AND status = 'ready' AND available_at <= ?
       ORDER BY priority DESC, available_at, seq LIMIT ?`,
    ),
    lease: db.prepare<[number, number, string, number, number, number, number], JobRow>(
      `UPDATE jobs SET status = 'leased', attempts = attempts + 1, deliveries = ?, lease_ms = ?,
         lease_token = ?, lease_expires_at = ?, updated_at = ?
       WHERE seq = ? AND deliveries = ? RETURNING *`,
    ),
    anyExpired: db.prepare<[number], { seq: number }>(
      "SELECT seq FROM jobs WHERE status = 'leased' AND lease_expires_at <= ? LIMIT 1",
    ),
    reap: db.prepare<[number, number], { queue: string }>(
      `UPDATE jobs SET
         status = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END,
         last_error = CASE WHEN attempts >= max_attempts
           THEN 'lease expired on the last of ' || max_attempts || ' attempts' ELSE last_error END,
         available_at = lease_expires_at, updated_at = ?
       WHERE status = 'leased' AND lease_expires_at <= ? RETURNING queue`,
    ),
    settle: db.prepare(
      `UPDATE jobs SET status = @status, available_at = @available_at, last_error = @last_error,
         lease_token = NULL, lease_expires_at = NULL, updated_at = @now WHERE seq = @seq RETURNING *`,
    ),
    heartbeat: db.prepare<[number, number, number, number], JobRow>(
      "UPDATE jobs SET lease_expires_at = ?, lease_ms = ?, updated_at = ? WHERE seq = ? RETURNING *",
    ),
    requeue: db.prepare<[number, number, number], JobRow>(
      `UPDATE jobs SET status = 'ready', attempts = 0, available_at = ?, updated_at = ?, lease_token = NULL
       WHERE seq = ? RETURNING *`,
    ),
    purge: db.prepare<[string, string, number], void>(
      "DELETE FROM jobs WHERE queue = ? AND status = ? AND updated_at <= ?",
    ),
    list: db.prepare<[string, number, number], JobRow>(
      "SELECT * FROM jobs WHERE queue = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    listStatus: db.prepare<[string, string, number, number], JobRow>(
      "SELECT * FROM jobs WHERE queue = ? AND status = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    queues: db.prepare<[], { name: string }>("SELECT name FROM queues ORDER BY name"),
    counts: db.prepare<[number], { queue: string; status: JobStatus; n: number; delayed: number }>(
      `SELECT queue, status, count(*) AS n, sum(status = 'ready' AND available_at > ?) AS delayed
       FROM jobs GROUP BY queue, status`,
    ),
    pending: db.prepare<[], { n: number }>("SELECT count(*) AS n FROM jobs WHERE status IN ('ready', 'leased')"),
    nextEvent: db.prepare<[string, number, string], { at: number | null }>(
      `SELECT min(at) AS at FROM (
         SELECT min(available_at) AS at FROM jobs WHERE queue = ? AND status = 'ready' AND available_at > ?
         UNION ALL SELECT min(lease_expires_at) FROM jobs WHERE queue = ? AND status = 'leased')`,
    ),
    subscribers: db.prepare<[string], { queue: string }>(
      "SELECT queue FROM subscriptions WHERE topic = ? ORDER BY queue",
    ),
    subscribe: db.prepare<[string, string, number], { created_at: number }>(
      "INSERT INTO subscriptions (topic, queue, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING created_at",
    ),
    subscription: db.prepare<[string, string], { created_at: number }>(
      "SELECT created_at FROM subscriptions WHERE topic = ? AND queue = ?",
    ),
    unsubscribe: db.prepare<[string, string], void>("DELETE FROM subscriptions WHERE topic = ? AND queue = ?"),
  };
}
