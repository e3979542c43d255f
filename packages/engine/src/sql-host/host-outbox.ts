import type Database from "better-sqlite3";

/**
 * A `db` primitive's outbox (engine README, "db outbox"): messages a write asked to enqueue into
 * a queue primitive of its group, kept in the user's database (table `_prim_outbox`) and written
 * in the transaction of the statements they go with — so they exist exactly when the write
 * committed. The engine reads them after the commit (`outbox.read`), delivers them into their
 * queues, then deletes them (`outbox.delete`); whatever is left after a crash is delivered at the
 * next start. Statements of the user's that would write to this table are refused (403).
 */
export const OUTBOX_TABLE = "_prim_outbox";

/** One message waiting in the outbox, as the engine hands it to the host and reads it back. */
export interface OutboxRow {
  /** `obx_…`: unique, ordered by the time it was made; the queue's record of what it delivered. */
  id: string;
  /** The db primitive whose write made it: a copy of the file (a fork, an import) delivers nothing. */
  source: string;
  /** The queue primitive's id, and the queue inside it. */
  queue_id: string;
  queue: string;
  /** The body as JSON text. */
  body: string;
  delay_ms: number;
  priority: number;
  max_attempts: number;
  dedupe_key: string | null;
  /** When the write was made (the engine's clock): a delay runs from here, not from the delivery. */
  created_at: number;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS ${OUTBOX_TABLE} (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  queue_id TEXT NOT NULL,
  queue TEXT NOT NULL,
  body TEXT NOT NULL,
  delay_ms INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  dedupe_key TEXT,
  created_at INTEGER NOT NULL
) WITHOUT ROWID`;

const COLUMNS = "id, source, queue_id, queue, body, delay_ms, priority, max_attempts, dedupe_key, created_at";

const statements = new WeakMap<
  Database.Database,
  { insert: Database.Statement; read: Database.Statement; remove: Database.Statement }
>();

function prepared(db: Database.Database) {
  let own = statements.get(db);
  if (own === undefined) {
    db.exec(SCHEMA);
    own = {
      insert: db.prepare(`INSERT INTO ${OUTBOX_TABLE} (${COLUMNS}) VALUES (${COLUMNS.replace(/(\w+)/g, "@$1")})`),
      read: db.prepare(`SELECT ${COLUMNS} FROM ${OUTBOX_TABLE} ORDER BY id LIMIT ?`),
      remove: db.prepare(`DELETE FROM ${OUTBOX_TABLE} WHERE id = ?`),
    };
    statements.set(db, own);
  }
  return own;
}

/** Writes `rows` into the outbox; called inside the statements' transaction. */
export function enqueueRows(db: Database.Database, rows: readonly OutboxRow[]): void {
  const { insert } = prepared(db);
  for (const row of rows) insert.run(row);
}

/** The oldest `limit` messages waiting (none when the table was never made). */
export function readOutbox(db: Database.Database, limit: number): OutboxRow[] {
  if (!statements.has(db) && !hasOutbox(db)) return [];
  return prepared(db).read.all(limit) as OutboxRow[];
}

/** Deletes delivered messages (ids not there any more are skipped). */
export function deleteOutbox(db: Database.Database, ids: readonly string[]): { deleted: number } {
  if (!statements.has(db) && !hasOutbox(db)) return { deleted: 0 };
  const { remove } = prepared(db);
  let deleted = 0;
  db.transaction(() => {
    for (const id of ids) deleted += remove.run(id).changes;
  })();
  return { deleted };
}

function hasOutbox(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_schema WHERE name = ?").get(OUTBOX_TABLE) !== undefined;
}
