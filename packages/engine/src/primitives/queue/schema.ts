/**
 * A queue primitive's tables. Each status change rewrites the index entries that name the
 * status, so indexes are partial where they can be: a job passes through \`jobs_ready\` and
 * \`jobs_leased\` and ends in \`jobs_finished\` (listing and purging done or dead jobs); pending
 * jobs are listed through \`jobs_by_queue\`. (An earlier full \`jobs_by_status\` index cost two
 * B-tree writes on every transition; it is dropped on open.)
 * `seq` orders jobs by send; `deliveries` counts leases ever
 * granted (it names the lease in its token and is never reset), while `attempts` counts towards
 * `max_attempts` and is reset by a requeue.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS queues (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  queue TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  deliveries INTEGER NOT NULL,
  available_at INTEGER NOT NULL,
  lease_ms INTEGER,
  lease_expires_at INTEGER,
  lease_token TEXT,
  dedupe_key TEXT,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs (queue, priority DESC, available_at, seq) WHERE status = 'ready';
CREATE INDEX IF NOT EXISTS jobs_leased ON jobs (lease_expires_at) WHERE status = 'leased';
CREATE INDEX IF NOT EXISTS jobs_by_queue ON jobs (queue, seq);
DROP INDEX IF EXISTS jobs_by_status;
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (queue, status, seq) WHERE status IN ('done', 'dead');
CREATE UNIQUE INDEX IF NOT EXISTS jobs_dedupe ON jobs (queue, dedupe_key)
  WHERE dedupe_key IS NOT NULL AND status IN ('ready', 'leased');
CREATE TABLE IF NOT EXISTS subscriptions (
  topic TEXT NOT NULL,
  queue TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (topic, queue)
) WITHOUT ROWID;
`;
