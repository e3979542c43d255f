import { randomBytes } from "node:crypto";
import { invalid, notFound } from "@prim/wire";
import { isWithin, nameOf, parentOf, ROOT, subtreeBounds } from "./limits.js";
import { conflict, type EntryRow, type FsStore } from "./store.js";

/** Rows of `@from` itself and everything below it. */
const FROM_TREE = "(path = @from OR (path > @lo AND path < @hi))";

export interface MoveResult {
  row: EntryRow;
  /** A blob reference that went away with a replaced file. */
  droppedBlob: boolean;
}

export interface ForkResult {
  path: string;
  files: number;
}

/**
 * Moves and forks: whole subtrees rewritten with one statement each. Entry ids survive a
 * move, so the search index (keyed by id) needs no change; a fork copies index rows too.
 */
export class FsTree {
  private readonly stmts;
  private readonly moveTx: (from: string, to: string, overwrite: boolean) => MoveResult;
  private readonly forkTx: (from: string, to: string) => ForkResult;

  constructor(private readonly store: FsStore) {
    const { db } = store;
    this.stmts = {
      move: db.prepare(
        `UPDATE entries SET path = @to || substr(path, length(@from) + 1),
           parent = CASE WHEN path = @from THEN @toParent ELSE @to || substr(parent, length(@from) + 1) END,
           name = CASE WHEN path = @from THEN @toName ELSE name END
         WHERE ${FROM_TREE}`,
      ),
      copy: db.prepare(
        `INSERT INTO entries (path, parent, name, type, size, mode, mtime, etag, content, blob)
         SELECT @to || substr(path, length(@from) + 1),
           CASE WHEN path = @from THEN @toParent ELSE @to || substr(parent, length(@from) + 1) END,
           CASE WHEN path = @from THEN @toName ELSE name END,
           type, size, mode, mtime, etag, content, blob
         FROM entries WHERE ${FROM_TREE} ORDER BY path`,
      ),
      copyText: db.prepare(
        `INSERT INTO entries_fts (rowid, body)
         SELECT n.id, f.body FROM entries o
           JOIN entries_fts f ON f.rowid = o.id
           JOIN entries n ON n.path = @to || substr(o.path, length(@from) + 1)
         WHERE o.path = @from OR (o.path > @lo AND o.path < @hi)`,
      ),
      countFiles: db.prepare(`SELECT count(*) FROM entries WHERE ${FROM_TREE} AND type = 'file'`).pluck(),
      deleteOne: db.prepare("DELETE FROM entries WHERE id = ?"),
      deleteText: db.prepare("DELETE FROM entries_fts WHERE rowid = ?"),
    };
    this.moveTx = db.transaction((from: string, to: string, overwrite: boolean) => this.moveNow(from, to, overwrite));
    this.forkTx = db.transaction((from: string, to: string) => this.forkNow(from, to));
  }

  /**
   * Renames `from` to exactly `to` (not into it). An existing `to` needs `overwrite`, and may
   * then be replaced only by the same kind: a file by a file, an empty directory by a directory.
   */
  move(from: string, to: string, overwrite: boolean): MoveResult {
    return this.moveTx(from, to, overwrite);
  }

  /** Copies the tree at `from` to `to` (default `<from>-fork-<6 chars>`); big files share their blob. */
  fork(from: string, to: string | undefined): ForkResult {
    return this.forkTx(from, to ?? `${from}-fork-${suffix()}`);
  }

  private moveNow(from: string, to: string, overwrite: boolean): MoveResult {
    const source = this.store.get(from);
    if (source === undefined) throw notFound(`path '${from}'`);
    if (from === ROOT) throw invalid("from: the root cannot be moved");
    if (from === to) return { row: source, droppedBlob: false };
    if (to === ROOT) throw conflict("'/' is the root directory");
    if (isWithin(to, from)) throw invalid(`to: cannot move '${from}' inside itself`);
    const target = this.store.get(to);
    const now = this.store.clock.now();
    let droppedBlob = false;
    if (target === undefined) {
      this.store.makeParents(to, now);
    } else {
      if (!overwrite) throw conflict(`'${to}' already exists; pass overwrite: true to replace it`);
      if (target.type !== source.type) throw conflict(`'${to}' is a ${target.type === "dir" ? "directory" : "file"}`);
      if (target.type === "dir" && this.store.stmts.hasChild.get(to) !== undefined) {
        throw conflict(`directory '${to}' is not empty`);
      }
      this.stmts.deleteText.run(target.id);
      this.stmts.deleteOne.run(target.id);
      droppedBlob = target.blob !== null && target.blob !== source.blob;
    }
    this.stmts.move.run({ ...this.bounds(from, to), toParent: parentOf(to), toName: nameOf(to) });
    this.store.touchParent(from, now);
    this.store.touchParent(to, now);
    this.store.changes.append("rename", from, { extra: { to } });
    return { row: this.store.get(to) as EntryRow, droppedBlob };
  }

  private forkNow(from: string, to: string): ForkResult {
    if (this.store.get(from) === undefined) throw notFound(`path '${from}'`);
    if (from === ROOT) throw invalid("from: the root cannot be forked inside itself; fork the primitive instead");
    if (to === ROOT || isWithin(to, from)) throw invalid(`to: must not be '${from}' or inside it`);
    if (this.store.get(to) !== undefined) throw conflict(`'${to}' already exists`);
    const now = this.store.clock.now();
    this.store.makeParents(to, now);
    const params = this.bounds(from, to);
    this.stmts.copy.run({ ...params, toParent: parentOf(to), toName: nameOf(to) });
    this.stmts.copyText.run(params);
    this.store.touchParent(to, now);
    const files = this.stmts.countFiles.get(params) as number;
    this.store.changes.append("copy", from, { extra: { to, files } });
    return { path: to, files };
  }

  private bounds(from: string, to: string) {
    return { from, to, ...subtreeBounds(from) };
  }
}

/** Six random lowercase letters and digits. */
function suffix(): string {
  const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  return Array.from(randomBytes(6), (b) => alphabet[b % 32]).join("");
}
