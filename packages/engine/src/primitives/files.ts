import { randomBytes } from "node:crypto";
import { copyFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Durability, PrimitiveType } from "@prim/wire";
import type Database from "better-sqlite3";
import type { PrimitiveRecord } from "../catalog/catalog.js";
import { SCHEMA_ROWS_SQL, type SchemaRow } from "../sql-host/protocol.js";
import { ConnectionSync, fsyncPath, syncFiles } from "../sqlite/durable-sync.js";
import { privateDir, privateFile } from "../sqlite/private-files.js";
import { openSqlite } from "../sqlite/sqlite.js";
import { ChangeLog, type ChangeLogOptions, type ChangeLogView, DEFAULT_CHANGE_RETENTION } from "./changes/log.js";
import { ChangeSignals } from "./changes/signals.js";
import type { ForkContext, PrimitiveDefinition, PrimitiveEnv, PrimitiveMove } from "./definition.js";

export interface PrimitiveHandle {
  id: string;
  type: PrimitiveType;
  /** The engine's connection to the file; null for types that keep their file elsewhere (db). */
  db: Database.Database | null;
  store: unknown;
  /** The primitive's change log; null for a type that keeps its file itself (db). */
  changes: ChangeLog | null;
  /** Durable writes' fsyncs of `db`'s file, made by the first durable call. */
  sync?: ConnectionSync;
}

/**
 * One SQLite file per primitive, under `<dataDir>/primitives/<id>.sqlite`. Open files stay
 * open in an LRU of handles (with their prepared statements) rather than being reopened per
 * request.
 */
export class PrimitiveFiles {
  private readonly dir: string;
  private readonly open = new Map<string, PrimitiveHandle>();
  private readonly freshSchemas = new Map<PrimitiveType, SchemaRow[]>();
  /** Wakes change-feed readers when a primitive's log commits an entry. */
  readonly changeSignals = new ChangeSignals();

  constructor(
    dataDir: string,
    private readonly definitions: ReadonlyMap<PrimitiveType, PrimitiveDefinition>,
    private readonly env: PrimitiveEnv,
    private readonly maxOpen = 256,
    private readonly changeLogOptions: ChangeLogOptions = {},
  ) {
    this.dir = privateDir(join(dataDir, "primitives"));
    privateDir(join(dataDir, "snapshots"));
  }

  /** A primitive's effective durability: its own setting, else the engine's. */
  durabilityOf(p: Pick<PrimitiveRecord, "durability">): Durability {
    return p.durability ?? this.env.durability;
  }

  /**
   * What a call on `p` waits for before it is answered: for a durable primitive, the fsync that
   * covers what the call (or a call before it) wrote; undefined when nothing is left unsynced.
   * A file closed since (LRU) was checkpointed on close, which SQLite fsyncs.
   */
  synced(p: PrimitiveRecord): Promise<unknown> | undefined {
    if (this.durabilityOf(p) !== "durable") return undefined;
    const handle = this.open.get(p.id);
    if (handle === undefined) return undefined;
    if (handle.db === null) return this.definitions.get(handle.type)?.synced?.(handle.store);
    handle.sync ??= new ConnectionSync(handle.db, this.path(p.id), this.env.syncs);
    return handle.sync.covered();
  }

  /** How many files are open now. */
  get openCount(): number {
    return this.open.size;
  }

  path(id: string): string {
    return join(this.dir, `${id}.sqlite`);
  }

  /**
   * A fresh temporary file (exports, fork staging) under `<dataDir>/tmp`, created empty with
   * mode 0600 so whatever is written into it (a SQLite backup) is private from the start.
   */
  tmpPath(name: string): string {
    const dir = privateDir(join(this.dir, "..", "tmp"));
    return privateFile(join(dir, `${name}-${randomBytes(6).toString("hex")}`));
  }

  /** A private working directory `<dataDir>/<name>` (group archives and uploads). */
  workDir(name: string): string {
    return privateDir(join(this.dir, "..", name));
  }

  /** Lets a type adjust a primitive whose data was just replaced by an imported copy. */
  async forked(id: string, type: PrimitiveType, fork: ForkContext): Promise<void> {
    await this.opened(type).onFork?.(this.handle(id, type).store, fork);
  }

  /** A directory for a primitive's further files (db branches and metadata). */
  auxDir(id: string): string {
    return join(this.dir, `${id}.d`);
  }

  definition(type: PrimitiveType): PrimitiveDefinition | undefined {
    return this.definitions.get(type);
  }

  /** The definition of a type whose file `handle` opened, so it is known. */
  private opened(type: PrimitiveType): PrimitiveDefinition {
    const definition = this.definitions.get(type);
    if (definition === undefined) throw new Error(`no primitive definition for type ${type}`);
    return definition;
  }

  /** The open handle of a primitive's file, opening (and creating) it if needed. */
  handle(id: string, type: PrimitiveType): PrimitiveHandle {
    const cached = this.open.get(id);
    if (cached !== undefined) {
      // Refresh LRU position: Map iteration order is insertion order.
      this.open.delete(id);
      this.open.set(id, cached);
      return cached;
    }
    const definition = this.definitions.get(type);
    if (definition === undefined) throw new Error(`no definition for primitive type ${type}`);
    const db = definition.ownsFile ? null : openSqlite(this.path(id), { exclusive: true });
    const changes = db === null ? null : this.newChangeLog(db, () => this.changeSignals.committed(id));
    const store = definition.open(db as Database.Database, {
      ...this.env,
      path: this.path(id),
      dir: this.auxDir(id),
      changes,
      changed: () => this.changeSignals.committed(id),
    });
    const handle: PrimitiveHandle = { id, type, db, store, changes };
    this.open.set(id, handle);
    this.evict();
    return handle;
  }

  /** A change log over `db` with this engine's settings (retention, on or off). */
  private newChangeLog(db: Database.Database, onCommit?: () => void): ChangeLog {
    const { enabled = true, ...retention } = this.changeLogOptions;
    return new ChangeLog(db, this.env.clock, {
      enabled,
      retention: { ...DEFAULT_CHANGE_RETENTION, ...retention },
      ...(onCommit === undefined ? {} : { onCommit }),
    });
  }

  /**
   * The change log of a primitive, brought up to date by its type (kv expiry) — null for a type
   * without one (db) or once the engine is closing (a parked reader must not reopen a file).
   */
  async changeLog(id: string, type: PrimitiveType): Promise<ChangeLogView | null> {
    if (this.changeSignals.closed) return null;
    const handle = this.handle(id, type);
    const definition = this.definitions.get(type);
    await definition?.beforeChangesRead?.(handle.store);
    return handle.changes ?? (await definition?.changeLog?.(handle.store)) ?? null;
  }

  items(id: string, type: PrimitiveType): number | Promise<number> {
    const handle = this.handle(id, type);
    const definition = this.opened(type);
    return definition.items(handle.store);
  }

  /** Lets the type react to a move to another group. */
  moved(id: string, type: PrimitiveType, move: PrimitiveMove): void {
    this.definitions.get(type)?.onMove?.(this.handle(id, type).store, move);
  }

  /** Blob hashes a primitive references. */
  blobRefs(id: string, type: PrimitiveType): Iterable<string> {
    const definition = this.definitions.get(type);
    if (definition?.blobRefs === undefined) return [];
    return definition.blobRefs(this.handle(id, type).store);
  }

  /** Bytes the primitive holds: its database file, write-ahead log and blobs. */
  sizeBytes(id: string, type?: PrimitiveType): number {
    const definition = type === undefined ? undefined : this.definitions.get(type);
    let total =
      definition?.externalBytes === undefined
        ? 0
        : definition.externalBytes(this.handle(id, type as PrimitiveType).store);
    const base = this.path(id);
    for (const file of [base, `${base}-wal`]) {
      try {
        total += statSync(file).size;
      } catch {
        // a missing WAL file is normal after a checkpoint on close
      }
    }
    return total;
  }

  /** Where every primitive's file lives: `<dataDir>/primitives/`. */
  get primitivesDir(): string {
    return this.dir;
  }

  /** Where snapshot directories live: `<dataDir>/snapshots/`. */
  get snapshotsDir(): string {
    return join(this.dir, "..", "snapshots");
  }

  /** Where a primitive's snapshot files live: `<dataDir>/snapshots/<id>/`. */
  snapshotDir(id: string): string {
    return join(this.snapshotsDir, id);
  }

  /**
   * Writes a consistent copy of the primitive's file to `dest` while writers continue. The
   * copy is private: its directory is made 0700 and the file is created 0600 before SQLite
   * writes into it.
   */
  async backup(id: string, type: PrimitiveType, dest: string): Promise<void> {
    privateDir(dirname(dest));
    rmSync(dest, { force: true });
    privateFile(dest);
    const handle = this.handle(id, type);
    const definition = this.opened(type);
    if (definition.backup !== undefined) await definition.backup(handle.store, dest);
    else await (handle.db as Database.Database).backup(dest);
    await syncFiles([dest]);
  }

  /** Replaces the primitive's data with the copy at `src` (which is left in place). */
  async restore(id: string, type: PrimitiveType, src: string): Promise<void> {
    const definition = this.opened(type);
    const kept = definition.beforeRestore?.(this.handle(id, type).store);
    const epoch = this.handle(id, type).changes?.state().epoch ?? 0;
    if (definition.restore !== undefined) {
      await definition.restore(this.handle(id, type).store, src);
      definition.onRestore?.(this.handle(id, type).store, kept);
      return;
    }
    const base = this.path(id);
    const staged = `${base}.restoring`;
    copyFileSync(src, staged);
    privateFile(staged); // a snapshot from an older version may be 0644
    await fsyncPath(staged);
    // From closing the connection to renaming the copy in, nothing yields: no request can
    // reopen the old file in between. Parked long polls end with the old store.
    const closing = this.closeOne(id);
    for (const file of [`${base}-wal`, `${base}-shm`]) rmSync(file, { force: true });
    renameSync(staged, base);
    await closing;
    await fsyncPath(dirname(base)); // the rename
    // The log is the snapshot's from here: a new epoch, so cursors issued before are refused (409).
    this.handle(id, type).changes?.newEpoch(epoch, false);
    this.changeSignals.committed(id);
    if (definition.onRestore !== undefined) definition.onRestore(this.handle(id, type).store, kept);
  }

  /**
   * Makes primitive `id` a copy of the file at `src` (a fork) and lets its type adjust it;
   * `move` renames a staged file into place instead of copying it (an import's own copy).
   */
  async adopt(id: string, type: PrimitiveType, src: string, fork: ForkContext, move = false): Promise<void> {
    if (move) renameSync(src, this.path(id));
    else copyFileSync(src, this.path(id));
    privateFile(this.path(id));
    await syncFiles([this.path(id)]);
    const definition = this.opened(type);
    // A copy under a new id keeps the source's history but never accepts its cursors.
    const changes = this.handle(id, type).changes;
    changes?.newEpoch(changes.state().epoch, true);
    await definition.onFork?.(this.handle(id, type).store, fork);
  }

  /** Whether files of `type` hold data sealed with this engine's keys (they need an archive key). */
  sealsForArchive(type: PrimitiveType): boolean {
    return this.definitions.get(type)?.toArchive !== undefined;
  }

  /**
   * A copy of a primitive's file made fit for a group archive (definition.ts `toArchive`);
   * without an archive key, its sealed values are left out.
   */
  toArchive(type: PrimitiveType, path: string, archiveKey: Buffer | null): void {
    this.definitions.get(type)?.toArchive?.(path, this.env, archiveKey);
  }

  /** An archived copy made fit to become primitive `target.id` here (`fromArchive`). */
  fromArchive(
    type: PrimitiveType,
    path: string,
    archiveKey: Buffer | null,
    target: { id: string; groupId: string },
  ): void {
    // Without an archive key, sealed values came without their key: the type refuses them.
    this.definitions.get(type)?.fromArchive?.(path, this.env, archiveKey, target);
  }

  /**
   * The schema of a fresh file of `type`, made by the type's own code in a temporary file and
   * read back (an imported file must have exactly this one: archive/imported-files.ts); null
   * for a type that keeps its file itself (db: the user's schema).
   */
  freshSchema(type: PrimitiveType): SchemaRow[] | null {
    const definition = this.opened(type);
    if (definition.ownsFile) return null;
    const known = this.freshSchemas.get(type);
    if (known !== undefined) return known;
    const path = this.tmpPath(`schema-${type}`);
    const db = openSqlite(path, { exclusive: true });
    try {
      const store = this.openDetached(definition, db, path);
      void definition.close?.(store);
      const rows = db.prepare(SCHEMA_ROWS_SQL).all() as SchemaRow[];
      this.freshSchemas.set(type, rows);
      return rows;
    } finally {
      db.close();
      for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
      rmSync(`${path}.d`, { recursive: true, force: true });
    }
  }

  /** A type's store over a file no live primitive owns (a scratch schema, a snapshot's copy): nobody is told of its changes. */
  private openDetached(definition: PrimitiveDefinition, db: Database.Database, path: string) {
    return definition.open(db, {
      ...this.env,
      path,
      dir: `${path}.d`,
      changes: this.newChangeLog(db),
      changed: () => {},
    });
  }

  /** Blob hashes named by a copy of a primitive's file (a snapshot), read through the type. */
  blobRefsOfFile(type: PrimitiveType, path: string): string[] {
    const definition = this.definitions.get(type);
    if (definition?.blobRefs === undefined || definition.ownsFile) return [];
    const db = openSqlite(path, { exclusive: true });
    const store = this.openDetached(definition, db, path);
    try {
      return [...definition.blobRefs(store)];
    } finally {
      void definition.close?.(store);
      db.close();
    }
  }

  /** Closes the file and deletes it with its WAL, shared-memory files and further files. */
  async remove(id: string): Promise<void> {
    await this.closeOne(id);
    const base = this.path(id);
    for (const file of [base, `${base}-wal`, `${base}-shm`]) rmSync(file, { force: true });
    rmSync(this.auxDir(id), { recursive: true, force: true });
    rmSync(this.snapshotDir(id), { recursive: true, force: true });
  }

  async closeAll(): Promise<void> {
    this.changeSignals.close();
    for (const id of [...this.open.keys()]) await this.closeOne(id);
  }

  private async closeOne(id: string): Promise<void> {
    const handle = this.open.get(id);
    if (handle === undefined) return;
    this.open.delete(id);
    handle.sync?.close();
    handle.db?.close();
    await this.definitions.get(handle.type)?.close?.(handle.store);
  }

  private evict(): void {
    while (this.open.size > this.maxOpen) {
      const oldest = this.open.keys().next().value as string;
      void this.closeOne(oldest);
    }
  }
}
