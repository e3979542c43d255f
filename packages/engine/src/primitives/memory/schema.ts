// The memory primitive's tables in its SQLite file.
//
// - `memories`: one row per memory; `seq` (the rowid) orders them (newest = highest) and keys
//   the FTS table. `tags` and `supersedes` are JSON arrays, `metadata` a JSON object,
//   `vector` a unit-length float32 embedding when an embedder is configured. `version` counts
//   the memory's changes and `last_op` names the last (NULL: none since it was made; history.ts
//   keeps the earlier versions); `superseded_at` is when it was first
//   superseded, `forgotten_at` when it was forgotten (a tombstone: the row stays, out of every
//   read but history and `as_of` recall, until FORGOTTEN_RETENTION_MS has passed).
//   `valid_from` is when the row's searchable state (text, kind, tags, owner) began. An update
//   that changes it first copies the row as a past row (`past_of` the memory's id, `id`
//   `<id>~<version>`, `forgotten_at` the time it was replaced), so `as_of` recall finds a
//   memory by the words it had then; past rows are in no other read. `ivf_list` is the vector's
//   list in the IVF index (vectors.ts).
// - `memory_tags`: (tag, seq) pairs, so tag filters are index lookups in SQL.
// - `memories_fts`: FTS5 over the text, porter-stemmed unicode61 words — the BM25 signal.
// The FTS table is an external-content table over `memories`, kept in step by triggers, with
// FTS5 secure-delete on, so a forgotten memory's terms are removed from the index itself (a
// file without it gets it built from the rows when opened: migrate.ts). The
// fuzzy signal's word list (with its trigram index) is in vocabulary.ts.
export const MEMORY_SCHEMA = `
CREATE TABLE IF NOT EXISTS memories (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  tags TEXT NOT NULL,
  owner TEXT,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  superseded_by TEXT,
  supersedes TEXT NOT NULL,
  vector BLOB,
  version INTEGER NOT NULL DEFAULT 1,
  superseded_at INTEGER,
  forgotten_at INTEGER,
  valid_from INTEGER,
  past_of TEXT,
  last_op TEXT,
  ivf_list INTEGER
);
CREATE INDEX IF NOT EXISTS memories_by_kind ON memories (kind, seq);
CREATE INDEX IF NOT EXISTS memories_by_owner ON memories (owner, seq);
CREATE INDEX IF NOT EXISTS memories_live ON memories (seq) WHERE superseded_by IS NULL;
CREATE TABLE IF NOT EXISTS memory_tags (
  tag TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (tag, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_tags_by_seq ON memory_tags (seq);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  text, content='memories', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_after_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_after_text_update AFTER UPDATE OF text ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
  INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_after_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
  DELETE FROM memory_tags WHERE seq = old.seq;
END;
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
`;
