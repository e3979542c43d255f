import type Database from "better-sqlite3";
import { VERSIONS_TABLE } from "./history.js";

/**
 * Brings a memory file made before versions (no `memories.version` column) up to date, in
 * place and in one transaction: the new columns are added, and every memory gets its history as
 * well as the old file can tell it — version 1 (`create`, at `created_at`) and, for a
 * superseded memory, version 2 (`supersede`, at `updated_at`, the time its link was set).
 * Run after MEMORY_SCHEMA (which leaves an old table as it is) and before HISTORY_SCHEMA.
 */
export function migrateMemoryFile(db: Database.Database): boolean {
  const columns = (db.prepare("PRAGMA table_info(memories)").all() as { name: string }[]).map((c) => c.name);
  if (columns.includes("version")) return false;
  db.transaction(() => {
    db.exec(`
      ALTER TABLE memories ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE memories ADD COLUMN superseded_at INTEGER;
      ALTER TABLE memories ADD COLUMN forgotten_at INTEGER;
      ALTER TABLE memories ADD COLUMN valid_from INTEGER;
      ALTER TABLE memories ADD COLUMN past_of TEXT;
      ALTER TABLE memories ADD COLUMN last_op TEXT;
      UPDATE memories SET valid_from = created_at;
      ${VERSIONS_TABLE}
      INSERT INTO memory_versions (id, version, op, at, kind, text, tags, owner, metadata, superseded_by, supersedes)
        SELECT id, 1, 'create', created_at, kind, NULL, tags, owner, metadata, NULL, supersedes
        FROM memories WHERE superseded_by IS NOT NULL;
      UPDATE memories SET version = 2, last_op = 'supersede', superseded_at = updated_at WHERE superseded_by IS NOT NULL;
    `);
  })();
  return true;
}

/** Whether the file has memories but no FTS5 index over them (made before it, or it was dropped). */
export function ftsIndexMissing(db: Database.Database): boolean {
  const has = (name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
  return has("memories") && !has("memories_fts");
}

/**
 * Fills the (new, empty) FTS5 index from every row of `memories` — live, superseded, tombstones
 * and past rows alike, as the triggers would have — in one transaction. Run after MEMORY_SCHEMA.
 */
export function buildFtsIndex(db: Database.Database): void {
  db.transaction(() => {
    db.exec("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')");
  })();
}

/**
 * Brings a file's vector index up to date, in place, before VECTOR_INDEX_SCHEMA: a file without
 * `memories.ivf_list` gets the column; a file whose lists were only `memories.ivf_list` (before
 * the entries table, vectors.ts) drops its `memories_by_ivf` index and marks every vector as
 * not yet in a list — its centroids stay (bank 0), and the vectors are put in their lists by
 * the index's steps between writes (ivf-maintenance.ts), compared exactly until then.
 */
export function migrateVectorIndex(db: Database.Database): boolean {
  const columnsOf = (table: string) =>
    (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const has = (name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
  if (!columnsOf("memories").includes("ivf_list")) {
    db.exec("ALTER TABLE memories ADD COLUMN ivf_list INTEGER");
    return true;
  }
  if (has("memory_ivf_entries") || !has("memory_ivf_state")) return false;
  db.transaction(() => {
    db.exec("DROP INDEX IF EXISTS memories_by_ivf");
    if (!columnsOf("memory_ivf_state").includes("bank")) {
      db.exec("ALTER TABLE memory_ivf_state ADD COLUMN bank INTEGER NOT NULL DEFAULT 0");
    }
    db.exec("UPDATE memories SET ivf_list = NULL WHERE ivf_list IS NOT NULL");
  })();
  return true;
}
