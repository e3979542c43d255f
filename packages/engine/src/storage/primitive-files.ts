import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import type { PrimitiveType } from "../core/types.js";
import type { PrimitiveDefinition, PrimitiveEnv } from "../primitives/definition.js";
import { openSqlite } from "./sqlite.js";

export interface PrimitiveHandle {
  id: string;
  type: PrimitiveType;
  /** The engine's connection to the file; null for types that keep their file elsewhere (db). */
  db: Database.Database | null;
  store: unknown;
}

/**
 * One SQLite file per primitive, under `<dataDir>/primitives/<id>.sqlite`. Open files stay
 * open in an LRU of handles (with their prepared statements) rather than being reopened per
 * request.
 */
export class PrimitiveFiles {
  private readonly dir: string;
  private readonly open = new Map<string, PrimitiveHandle>();

  constructor(
    dataDir: string,
    private readonly definitions: ReadonlyMap<PrimitiveType, PrimitiveDefinition>,
    private readonly env: PrimitiveEnv,
    private readonly maxOpen = 256,
  ) {
    this.dir = join(dataDir, "primitives");
    mkdirSync(this.dir, { recursive: true });
  }

  /** How many files are open now. */
  get openCount(): number {
    return this.open.size;
  }

  path(id: string): string {
    return join(this.dir, `${id}.sqlite`);
  }

  /** A fresh path for a temporary file (exports), under `<dataDir>/tmp`. */
  tmpPath(name: string): string {
    const dir = join(this.dir, "..", "tmp");
    mkdirSync(dir, { recursive: true });
    return join(dir, `${name}-${randomBytes(6).toString("hex")}`);
  }

  /** A directory for a primitive's further files (db branches and metadata). */
  auxDir(id: string): string {
    return join(this.dir, `${id}.d`);
  }

  definition(type: PrimitiveType): PrimitiveDefinition | undefined {
    return this.definitions.get(type);
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
    const store = definition.open(db as Database.Database, { ...this.env, path: this.path(id), dir: this.auxDir(id) });
    const handle: PrimitiveHandle = { id, type, db, store };
    this.open.set(id, handle);
    this.evict();
    return handle;
  }

  items(id: string, type: PrimitiveType): number | Promise<number> {
    const handle = this.handle(id, type);
    const definition = this.definitions.get(type) as PrimitiveDefinition;
    return definition.items(handle.store);
  }

  /** Lets the type react to a move to another group. */
  moved(id: string, type: PrimitiveType): void {
    this.definitions.get(type)?.onMove?.(this.handle(id, type).store);
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

  /** Closes the file and deletes it with its WAL, shared-memory files and further files. */
  async remove(id: string): Promise<void> {
    await this.closeOne(id);
    const base = this.path(id);
    for (const file of [base, `${base}-wal`, `${base}-shm`]) rmSync(file, { force: true });
    rmSync(this.auxDir(id), { recursive: true, force: true });
  }

  async closeAll(): Promise<void> {
    for (const id of [...this.open.keys()]) await this.closeOne(id);
  }

  private async closeOne(id: string): Promise<void> {
    const handle = this.open.get(id);
    if (handle === undefined) return;
    this.open.delete(id);
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
