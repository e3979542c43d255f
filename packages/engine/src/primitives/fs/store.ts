import { type FsEntry, notFound, ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import type { ChangeLog } from "../changes/log.js";
import {
  ancestorsOf,
  DEFAULT_DIR_MODE,
  DEFAULT_FILE_MODE,
  formatMode,
  MAX_LIST_ENTRIES,
  nameOf,
  parentOf,
  ROOT,
  subtreeBounds,
} from "./limits.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,   -- stable across moves: the search index is keyed by it
  path TEXT NOT NULL UNIQUE,
  parent TEXT,              -- null for the root
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('file', 'dir')),
  size INTEGER NOT NULL DEFAULT 0,
  mode INTEGER NOT NULL,
  mtime INTEGER NOT NULL,
  etag TEXT,                -- files only
  content BLOB,             -- files of at most 64 KiB
  blob TEXT                 -- larger files: sha256 of a blob in the blob store
);
CREATE INDEX IF NOT EXISTS entries_parent ON entries (parent, name);
CREATE INDEX IF NOT EXISTS entries_blob ON entries (blob) WHERE blob IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
`;

export interface EntryRow {
  id: number;
  path: string;
  name: string;
  type: "file" | "dir";
  size: number;
  mode: number;
  mtime: number;
  etag: string | null;
  blob: string | null;
}

/** What a file write stores: inline bytes or a blob reference, and the text to index. */
export interface NewFile {
  path: string;
  size: number;
  etag: string;
  /** Null keeps an existing file's mode (or gives a new one the default). */
  mode: number | null;
  content: Buffer | null;
  blob: string | null;
  /** The file's text when it is indexed for search, else null. */
  text: string | null;
}

export function toEntry(row: EntryRow): FsEntry {
  return {
    path: row.path,
    name: row.name,
    type: row.type,
    size: row.size,
    mode: formatMode(row.mode),
    mtime: row.mtime,
    etag: row.etag,
  };
}

export const conflict = (message: string) => new ServiceError("fs_conflict", message);

const COLUMNS = "id, path, name, type, size, mode, mtime, etag, blob";
/** Rows of `path` itself and everything below it. */
const TREE = "(path = @path OR (path > @lo AND path < @hi))";

/** The tree of one `fs` primitive in its SQLite file: one row per file and directory. */
/** Names of the store's prepared statements (spelled out: declarations cannot name the inferred type). */
type StatementName =
  | "get"
  | "content"
  | "children"
  | "subtree"
  | "iterateTree"
  | "hasChild"
  | "insertDir"
  | "upsertFile"
  | "touch"
  | "treeBlobs"
  | "deleteTreeText"
  | "deleteTree"
  | "deleteText"
  | "insertText"
  | "count"
  | "blobBytes"
  | "blobRefs";

export class FsStore {
  readonly stmts: Record<StatementName, Database.Statement>;
  private readonly writeTx: (file: NewFile) => { row: EntryRow; created: boolean; oldBlob: string | null };
  private readonly mkdirTx: (path: string) => { row: EntryRow; created: boolean };
  private readonly removeTx: (path: string, recursive: boolean) => { blobs: number };

  constructor(
    readonly db: Database.Database,
    readonly clock: Clock,
    /** The primitive's change log: `write`, `mkdir`, `delete`, `rename`, `copy` (tree.ts appends the last two). */
    readonly changes: ChangeLog,
  ) {
    db.exec(SCHEMA);
    db.prepare(
      `INSERT OR IGNORE INTO entries (path, parent, name, type, mode, mtime) VALUES ('/', NULL, '', 'dir', ?, ?)`,
    ).run(DEFAULT_DIR_MODE, clock.now());
    this.stmts = {
      get: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE path = ?`),
      content: db.prepare("SELECT content FROM entries WHERE path = ?").pluck(),
      children: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE parent = ? ORDER BY name LIMIT ?`),
      subtree: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE path > @lo AND path < @hi ORDER BY path LIMIT @limit`),
      iterateTree: db.prepare(`SELECT path FROM entries WHERE ${TREE} ORDER BY path`).pluck(),
      hasChild: db.prepare("SELECT 1 FROM entries WHERE parent = ? LIMIT 1").pluck(),
      insertDir: db.prepare(
        "INSERT INTO entries (path, parent, name, type, mode, mtime) VALUES (@path, @parent, @name, 'dir', @mode, @mtime)",
      ),
      upsertFile: db.prepare(
        `INSERT INTO entries (path, parent, name, type, size, mode, mtime, etag, content, blob)
         VALUES (@path, @parent, @name, 'file', @size, @mode, @mtime, @etag, @content, @blob)
         ON CONFLICT (path) DO UPDATE SET size = excluded.size, mode = excluded.mode, mtime = excluded.mtime,
           etag = excluded.etag, content = excluded.content, blob = excluded.blob
         RETURNING ${COLUMNS}`,
      ),
      touch: db.prepare("UPDATE entries SET mtime = ? WHERE path = ?"),
      treeBlobs: db.prepare(`SELECT count(*) FROM entries WHERE ${TREE} AND blob IS NOT NULL`).pluck(),
      deleteTreeText: db.prepare(`DELETE FROM entries_fts WHERE rowid IN (SELECT id FROM entries WHERE ${TREE})`),
      deleteTree: db.prepare(`DELETE FROM entries WHERE ${TREE}`),
      deleteText: db.prepare("DELETE FROM entries_fts WHERE rowid = ?"),
      insertText: db.prepare("INSERT INTO entries_fts (rowid, body) VALUES (?, ?)"),
      count: db.prepare("SELECT count(*) FROM entries WHERE type = 'file'").pluck(),
      // A blob shared by several files of this store (a fork) is counted once.
      blobBytes: db
        .prepare(
          "SELECT coalesce(sum(size), 0) FROM (SELECT max(size) AS size FROM entries WHERE blob IS NOT NULL GROUP BY blob)",
        )
        .pluck(),
      blobRefs: db.prepare("SELECT DISTINCT blob FROM entries WHERE blob IS NOT NULL").pluck(),
    };
    this.writeTx = db.transaction((file: NewFile) => {
      const current = this.get(file.path);
      if (current?.type === "dir") throw conflict(`'${file.path}' is a directory`);
      const now = this.clock.now();
      const created = current === undefined;
      if (created) this.makeParents(file.path, now);
      const row = this.stmts.upsertFile.get({
        path: file.path,
        parent: parentOf(file.path),
        name: nameOf(file.path),
        size: file.size,
        mode: file.mode ?? current?.mode ?? DEFAULT_FILE_MODE,
        mtime: now,
        etag: file.etag,
        content: file.content,
        blob: file.blob,
      }) as EntryRow;
      this.stmts.deleteText.run(row.id);
      if (file.text !== null) this.stmts.insertText.run(row.id, file.text);
      if (created) this.touchParent(file.path, now);
      this.changes.append("write", file.path, { size: file.size });
      return { row, created, oldBlob: current?.blob ?? null };
    });
    this.mkdirTx = db.transaction((path: string) => {
      const current = this.get(path);
      if (current?.type === "file") throw conflict(`'${path}' is a file`);
      if (current !== undefined) return { row: current, created: false };
      this.makeParents(path, this.clock.now());
      this.makeDir(path, this.clock.now());
      this.changes.append("mkdir", path);
      return { row: this.get(path) as EntryRow, created: true };
    });
    this.removeTx = db.transaction((path: string, recursive: boolean) => {
      const current = this.get(path);
      if (current === undefined) throw notFound(`path '${path}'`);
      if (current.type === "dir" && !recursive && this.stmts.hasChild.get(path) !== undefined) {
        throw conflict(`directory '${path}' is not empty; pass recursive=1 to delete it with its contents`);
      }
      const tree = { path, ...subtreeBounds(path) };
      const blobs = this.stmts.treeBlobs.get(tree) as number;
      this.stmts.deleteTreeText.run(tree);
      this.stmts.deleteTree.run(tree);
      this.touchParent(path, this.clock.now());
      this.changes.append("delete", path, current.type === "dir" ? { extra: { dir: true } } : { size: current.size });
      return { blobs };
    });
  }

  get(path: string): EntryRow | undefined {
    return this.stmts.get.get(path) as EntryRow | undefined;
  }

  /** The inline bytes of a file stored inline. */
  inlineContent(path: string): Buffer {
    return (this.stmts.content.get(path) as Buffer | null) ?? Buffer.alloc(0);
  }

  /**
   * Refuses a write at `path` when something is in the way: an ancestor that is a file, or
   * (for a file write) a directory at the path itself. Checked before an upload to fail fast,
   * and again inside the commit.
   */
  checkWritable(path: string, kind: "file" | "dir"): void {
    if (path === ROOT) {
      if (kind === "file") throw conflict("'/' is a directory");
      return;
    }
    for (const ancestor of ancestorsOf(path)) {
      const row = this.get(ancestor);
      if (row === undefined) return;
      if (row.type === "file") throw conflict(`'${ancestor}' is a file`);
    }
    if (kind === "file" && this.get(path)?.type === "dir") throw conflict(`'${path}' is a directory`);
  }

  /** Creates missing directories above `path`; a file among them is a conflict. */
  makeParents(path: string, now: number): void {
    for (const ancestor of ancestorsOf(path)) {
      const row = this.get(ancestor);
      if (row?.type === "file") throw conflict(`'${ancestor}' is a file`);
      if (row === undefined) this.makeDir(ancestor, now);
    }
  }

  private makeDir(path: string, now: number): void {
    this.stmts.insertDir.run({ path, parent: parentOf(path), name: nameOf(path), mode: DEFAULT_DIR_MODE, mtime: now });
    this.touchParent(path, now);
  }

  /** A directory's mtime moves when an entry is added to or removed from it. */
  touchParent(path: string, now: number): void {
    const parent = parentOf(path);
    if (parent !== null) this.stmts.touch.run(now, parent);
  }

  /** Writes a file (parents created as needed), replacing any file at the path. */
  writeFile(file: NewFile): { row: EntryRow; created: boolean; oldBlob: string | null } {
    return this.writeTx(file);
  }

  /** `mkdir -p`: an existing directory is fine; a file in the way is a conflict. */
  mkdir(path: string): { row: EntryRow; created: boolean } {
    if (path !== ROOT) this.checkWritable(path, "dir");
    return this.mkdirTx(path);
  }

  /** Deletes a file or directory; returns how many blob references went away. */
  remove(path: string, recursive: boolean): { blobs: number } {
    return this.removeTx(path, recursive);
  }

  /** A directory's direct children by name, or its whole subtree by path (`recursive`). */
  list(path: string, recursive: boolean): { rows: EntryRow[]; truncated: boolean } {
    const limit = MAX_LIST_ENTRIES + 1;
    const rows = (
      recursive ? this.stmts.subtree.all({ ...subtreeBounds(path), limit }) : this.stmts.children.all(path, limit)
    ) as EntryRow[];
    const truncated = rows.length > MAX_LIST_ENTRIES;
    return { rows: truncated ? rows.slice(0, MAX_LIST_ENTRIES) : rows, truncated };
  }

  /** Paths of `path` and everything below it, in order (lazily, for glob). */
  treePaths(path: string): IterableIterator<string> {
    return this.stmts.iterateTree.iterate({ path, ...subtreeBounds(path) }) as IterableIterator<string>;
  }

  count(): number {
    return this.stmts.count.get() as number;
  }

  blobBytes(): number {
    return this.stmts.blobBytes.get() as number;
  }

  blobRefs(): string[] {
    return this.stmts.blobRefs.all() as string[];
  }
}
