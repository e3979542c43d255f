import type Database from "better-sqlite3";
import type { OutboxRow } from "../../sql-host/host-outbox.js";
import type { QueueStore } from "./store.js";

/**
 * A queue primitive's side of the db outbox (engine README, "db outbox"): it takes in messages a
 * db's committed write left in its outbox, and records each one it took (`prim_outbox_seen`:
 * the db's id and the message's `obx_…` id, the job it became) in the same transaction as the
 * job. A message delivered again — the engine died after this commit and before the db's outbox
 * row was deleted — finds its record and makes no second job: exactly once, whatever the job
 * became since (received, acked, purged).
 *
 * Records go when they can no longer be needed: a record older than `SEEN_KEEP_MS` whose id is
 * below every message its db still holds (ids grow with time; the engine delivers in id order).
 * Within those 7 days even a db restored to a snapshot that still held delivered messages
 * delivers none of them twice.
 */
export const SEEN_KEEP_MS = 7 * 86_400_000;

export const INBOX_SCHEMA = `CREATE TABLE IF NOT EXISTS prim_outbox_seen (
  source TEXT NOT NULL,
  id TEXT NOT NULL,
  job TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (source, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS prim_outbox_seen_at ON prim_outbox_seen (source, at)`;

/** What became of one message: its job (new, or the pending one with its `dedupe_key`), or an earlier delivery's. */
export interface Delivered {
  id: string;
  job: string;
  /** Already delivered before (a repeated drain): no job made now. */
  repeated: boolean;
}

export class QueueInbox {
  private readonly seen: Database.Statement<[string, string], { job: string }>;
  private readonly record: Database.Statement<[string, string, string, number], unknown>;
  private readonly prune: Database.Statement<[string, number, string], unknown>;

  constructor(
    private readonly db: Database.Database,
    private readonly store: QueueStore,
  ) {
    db.exec(INBOX_SCHEMA);
    this.seen = db.prepare("SELECT job FROM prim_outbox_seen WHERE source = ? AND id = ?");
    this.record = db.prepare("INSERT INTO prim_outbox_seen (source, id, job, at) VALUES (?, ?, ?, ?)");
    // Walks only the records past their 7 days (the index on `at`), not every record of the db.
    this.prune = db.prepare(
      "DELETE FROM prim_outbox_seen INDEXED BY prim_outbox_seen_at WHERE source = ? AND at < ? AND id < ?",
    );
  }

  /**
   * Sends `rows` (all of db `source`, in id order) in one transaction of the queue's group
   * commit: each becomes a job unless this queue took it before. A delay runs from the write's
   * commit (`created_at`), so a message delivered late is not held back twice as long.
   */
  deliver(source: string, rows: readonly OutboxRow[]): Promise<Delivered[]> {
    return this.store.inCommit(() =>
      this.db.transaction(() => {
        const now = this.store.clock.now();
        const out = rows.map((row): Delivered => {
          const before = this.seen.get(source, row.id);
          if (before !== undefined) return { id: row.id, job: before.job, repeated: true };
          const { job } = this.store.sendNow(
            row.queue,
            {
              body: row.body,
              delayMs: Math.max(0, row.created_at + row.delay_ms - now),
              priority: row.priority,
              maxAttempts: row.max_attempts,
              dedupeKey: row.dedupe_key,
            },
            now,
          );
          this.record.run(source, row.id, job.id, now);
          return { id: row.id, job: job.id, repeated: false };
        });
        const first = rows[0];
        if (first !== undefined) this.prune.run(source, now - SEEN_KEEP_MS, first.id);
        return out;
      })(),
    );
  }
}
