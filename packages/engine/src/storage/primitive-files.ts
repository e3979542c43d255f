import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";
import type { PrimitiveType } from "../core/types.js";
import type { PrimitiveDefinition } from "../primitives/definition.js";
import { openSqlite } from "./sqlite.js";

export interface PrimitiveHandle {
  id: string;
  type: PrimitiveType;
  db: Database.Database;
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
    private readonly clock: Clock,
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
    const db = openSqlite(this.path(id), { exclusive: true });
    const handle: PrimitiveHandle = { id, type, db, store: definition.open(db, { clock: this.clock }) };
    this.open.set(id, handle);
    this.evict();
    return handle;
  }

  items(id: string, type: PrimitiveType): number {
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

  /** Closes the file and deletes it with its WAL and shared-memory files. */
  remove(id: string): void {
    this.closeOne(id);
    const base = this.path(id);
    for (const file of [base, `${base}-wal`, `${base}-shm`]) rmSync(file, { force: true });
  }

  closeAll(): void {
    for (const id of [...this.open.keys()]) this.closeOne(id);
  }

  private closeOne(id: string): void {
    const handle = this.open.get(id);
    if (handle === undefined) return;
    this.open.delete(id);
    handle.db.close();
  }

  private evict(): void {
    while (this.open.size > this.maxOpen) {
      const oldest = this.open.keys().next().value as string;
      this.closeOne(oldest);
    }
  }
}
