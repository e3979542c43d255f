// A memory's history: one entry per change, the memory as it was right after it.
//
// - The current version is the `memories` row itself: `version`, `last_op` (NULL: create) and
//   `updated_at` (every change sets it) — a memory never changed costs no history row.
// - `memory_versions`: (id, version) → each earlier version: the change (`op`: create, update,
//   supersede, forget), when (`at`), and the record's fields then, written when the next change
//   comes. `text` is NULL while it equals the memory's current text (so the text is stored once,
//   not once per version); an update first writes the outgoing text into the versions that held it.
// - A forgotten memory is a tombstone (`memories.forgotten_at`): its row, versions and index
//   entries stay — `as_of` recall still finds it as it was — until FORGOTTEN_RETENTION_MS after
//   the forget, when the next write (or the next open) erases them for good.
import type { MemoryVersion, MemoryVersionOp } from "@prim/wire";
import type Database from "better-sqlite3";
import { answerBytes, toRecord } from "./record.js";

export type { MemoryVersion, MemoryVersionOp };

/**
 * How long a forgotten memory stays as a tombstone (history, `as_of` recall) before it is
 * erased: 7 days, the primitive's change-log retention, so a feed reader that sees the `forget`
 * entry can still read what was forgotten. Versions of memories not forgotten are kept.
 */
export const FORGOTTEN_RETENTION_MS = 7 * 86_400_000;
/** Tombstones erased per write at most (the rest at the next writes). */
const PURGE_BATCH = 256;

export const VERSIONS_TABLE = `
CREATE TABLE IF NOT EXISTS memory_versions (
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  op TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  text TEXT,
  tags TEXT NOT NULL,
  owner TEXT,
  metadata TEXT NOT NULL,
  superseded_by TEXT,
  supersedes TEXT NOT NULL,
  PRIMARY KEY (id, version)
);
`;

/** The versions table and the indexes over the columns versions added to `memories`. */
export const HISTORY_SCHEMA = `${VERSIONS_TABLE}
CREATE INDEX IF NOT EXISTS memories_forgotten ON memories (forgotten_at)
  WHERE forgotten_at IS NOT NULL AND past_of IS NULL;
CREATE INDEX IF NOT EXISTS memories_past ON memories (past_of) WHERE past_of IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_by_created ON memories (created_at);
`;

/** A version row with its text resolved and the memory's creation time. */
export interface VersionRow {
  id: string;
  version: number;
  op: MemoryVersionOp;
  at: number;
  kind: string;
  text: string;
  tags: string;
  owner: string | null;
  metadata: string;
  superseded_by: string | null;
  supersedes: string;
  created_at: number;
}

/** Every version of memory `@id`: the current one (its row) and the earlier ones. */
const VERSIONS = `SELECT id, version, coalesce(last_op, 'create') AS op, updated_at AS at, kind, text, tags, owner,
    metadata, superseded_by, supersedes, created_at FROM memories WHERE id = @id
  UNION ALL
  SELECT v.id, v.version, v.op, v.at, v.kind, coalesce(v.text, m.text), v.tags, v.owner, v.metadata,
    v.superseded_by, v.supersedes, m.created_at FROM memory_versions v JOIN memories m ON m.id = v.id
  WHERE v.id = @id`;

/** A version's bytes in a JSON answer: a memory's (record.ts `answerBytes`). */
export const versionBytes = answerBytes;

/** A version as answered: the memory as it was right after the change, with the change's `op` and `at`. */
export function toVersion(row: VersionRow): MemoryVersion {
  return { ...toRecord({ ...row, updated_at: row.at }), op: row.op, at: row.at };
}

/** The memory a row belongs to: a past row's id is `<id>~<version>`. */
export function memoryIdOf(rowId: string): string {
  const cut = rowId.indexOf("~");
  return cut < 0 ? rowId : rowId.slice(0, cut);
}

/** The versions table of one memory file; every method runs inside the caller's transaction. */
export class History {
  private readonly stmts;

  constructor(db: Database.Database) {
    db.exec(HISTORY_SCHEMA);
    this.stmts = {
      advance: db.prepare("UPDATE memories SET version = version + 1, last_op = @op WHERE id = @id RETURNING version"),
      keep: db.prepare(
        `INSERT INTO memory_versions (id, version, op, at, kind, text, tags, owner, metadata, superseded_by, supersedes)
         SELECT id, version, coalesce(last_op, 'create'), updated_at, kind, NULL, tags, owner, metadata, superseded_by,
           supersedes FROM memories WHERE id = ?`,
      ),
      keepText: db.prepare("UPDATE memory_versions SET text = ? WHERE id = ? AND text IS NULL"),
      exists: db.prepare("SELECT 1 FROM memories WHERE id = ?"),
      page: db.prepare(`SELECT * FROM (${VERSIONS}) WHERE version < @before ORDER BY version DESC LIMIT @limit`),
      asOf: db.prepare(`SELECT * FROM (${VERSIONS}) WHERE at <= @at ORDER BY version DESC LIMIT 1`),
      expired: db.prepare(
        `SELECT seq, id, text FROM memories WHERE forgotten_at IS NOT NULL AND past_of IS NULL AND forgotten_at <= ?
         ORDER BY forgotten_at LIMIT ${PURGE_BATCH}`,
      ),
      pastRows: db.prepare("SELECT seq, text FROM memories WHERE past_of = ?"),
      copyPast: db.prepare(
        `INSERT INTO memories (id, kind, text, tags, owner, metadata, created_at, updated_at, superseded_by, supersedes,
           vector, ivf_list, version, superseded_at, forgotten_at, valid_from, past_of)
         SELECT id || '~' || version, kind, text, tags, owner, metadata, created_at, updated_at, superseded_by, supersedes,
           vector, NULL, version, NULL, @now, valid_from, id FROM memories WHERE seq = @seq RETURNING seq`,
      ),
      copyTags: db.prepare("INSERT INTO memory_tags (tag, seq) SELECT tag, @to FROM memory_tags WHERE seq = @from"),
      deleteVersions: db.prepare("DELETE FROM memory_versions WHERE id = ?"),
      deleteMemory: db.prepare("DELETE FROM memories WHERE seq = ?"),
    };
  }

  /**
   * Changes memory `id` by `change` (which sets `updated_at`), a new version made by `op`: the
   * version it had is kept first. Returns the new version. (A new memory is version 1 by itself.)
   */
  change(id: string, op: Exclude<MemoryVersionOp, "create">, change: () => void): number {
    this.stmts.keep.run(id);
    change();
    return (this.stmts.advance.get({ id, op }) as { version: number }).version;
  }

  /**
   * Before the searchable state of row `seq` changes at `now`: a past row keeps it for `as_of`
   * recall (schema.ts). Returns the past row's seq.
   */
  keepPast(seq: number, now: number): number {
    const past = (this.stmts.copyPast.get({ seq, now }) as { seq: number }).seq;
    this.stmts.copyTags.run({ to: past, from: seq });
    return past;
  }

  /** Before the memory's text changes: the versions holding it keep the outgoing text. */
  keepText(id: string, text: string): void {
    this.stmts.keepText.run(text, id);
  }

  /** Whether a row (live, superseded or a tombstone) exists for `id`. */
  exists(id: string): boolean {
    return this.stmts.exists.get(id) !== undefined;
  }

  /** Versions before `beforeVersion`, newest first, at most `limit`. */
  page(id: string, beforeVersion: number, limit: number): IterableIterator<VersionRow> {
    return this.stmts.page.iterate({ id, before: beforeVersion, limit }) as IterableIterator<VersionRow>;
  }

  /** The memory as it was at `at` (its newest version by then), or undefined. */
  asOf(id: string, at: number): VersionRow | undefined {
    return this.stmts.asOf.get({ id, at }) as VersionRow | undefined;
  }

  /**
   * Erases tombstones older than the retention (rows, past rows, tags, FTS entries, versions);
   * calls `erased` with each row's text (the vocabulary uncounts it). Returns the rows erased.
   */
  purge(now: number, erased: (text: string) => void): number {
    const rows = this.stmts.expired.all(now - FORGOTTEN_RETENTION_MS) as { seq: number; id: string; text: string }[];
    let erasedRows = 0;
    for (const row of rows) {
      this.stmts.deleteVersions.run(row.id);
      const past = this.stmts.pastRows.all(row.id) as { seq: number; text: string }[];
      for (const r of [...past, row]) {
        this.stmts.deleteMemory.run(r.seq);
        erased(r.text);
        erasedRows++;
      }
    }
    return erasedRows;
  }
}
