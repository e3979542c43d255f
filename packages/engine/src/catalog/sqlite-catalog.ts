import { join } from "node:path";
import { type AuditEntry, type Durability, type PrimitiveType, ServiceError } from "@prim/wire";
import Database from "better-sqlite3";
import { isGroupId } from "../core/ids.js";
import { ConnectionSync, type SyncCounters } from "../sqlite/durable-sync.js";
import { openSqlite } from "../sqlite/sqlite.js";
import type {
  AuditFilter,
  AuditRecord,
  Catalog,
  GroupRecord,
  PrimitivePatch,
  PrimitiveRecord,
  SnapshotRecord,
} from "./catalog.js";
import { PrimitiveCache } from "./primitive-cache.js";
import { type AuditWriter, SqliteAudit } from "./sqlite-audit.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS groups (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  namespace TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS primitives (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  group_id TEXT NOT NULL REFERENCES groups(id),
  created_at INTEGER NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  forked_from TEXT,
  durability TEXT,
  UNIQUE (group_id, type, name)
);
CREATE TABLE IF NOT EXISTS snapshots (
  id TEXT PRIMARY KEY,
  primitive_id TEXT NOT NULL,
  name TEXT,
  created_at INTEGER NOT NULL,
  blob_refs TEXT NOT NULL,
  UNIQUE (primitive_id, name)
);
CREATE INDEX IF NOT EXISTS snapshots_by_primitive ON snapshots (primitive_id, id);
`;

interface PrimitiveRow {
  id: string;
  name: string;
  type: PrimitiveType;
  group_id: string;
  group_name: string;
  created_at: number;
  paused: number;
  forked_from: string | null;
  durability: Durability | null;
}

const PRIMITIVE_SELECT = `SELECT p.id, p.name, p.type, p.group_id, g.name AS group_name, p.created_at,
  p.paused, p.forked_from, p.durability FROM primitives p JOIN groups g ON g.id = p.group_id`;

function toPrimitive(row: PrimitiveRow): PrimitiveRecord {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    group_id: row.group_id,
    group: row.group_name,
    created_at: row.created_at,
    paused: row.paused === 1,
    forked_from: row.forked_from === null ? null : JSON.parse(row.forked_from),
    durability: row.durability,
  };
}

interface SnapshotRow {
  id: string;
  primitive_id: string;
  name: string | null;
  created_at: number;
  blob_refs: string;
}

function toSnapshot(row: SnapshotRow): SnapshotRecord {
  return { ...row, blob_refs: JSON.parse(row.blob_refs) as string[] };
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Database.SqliteError && err.code.startsWith("SQLITE_CONSTRAINT");
}

/**
 * The local engine's catalog: `catalog.sqlite` (groups, primitives) and `audit.sqlite` beside
 * the primitives' files. One process owns a data directory (the engine holds a lock file), so
 * primitive records are cached in memory — every request resolves its primitive — as are a
 * reference's lookups (groups by id and name, primitives by name: every MCP tool call names its
 * store), and both are dropped on every catalog write.
 */
export class SqliteCatalog implements Catalog {
  private readonly db: Database.Database;
  private readonly audit: SqliteAudit;
  private readonly stmts;
  private readonly cache = new PrimitiveCache();
  /** Groups by id and by name, and primitives by name, dropped with the records (as PgCatalog keeps them). */
  private readonly lookups = new Map<string, GroupRecord | PrimitiveRecord[] | null>();
  private readonly sync: ConnectionSync | undefined;

  /**
   * `auditWriter`: a cell's shared audit writer thread (default: one of its own). `syncs`: the
   * engine is durable — catalog writes are fsynced before the calls that made them are answered.
   */
  constructor(dir: string, auditWriter?: AuditWriter, syncs?: SyncCounters) {
    const path = join(dir, "catalog.sqlite");
    this.db = openSqlite(path);
    this.db.exec(SCHEMA);
    // Catalogs made before per-primitive durability lack its column.
    const columns = this.db.prepare("SELECT name FROM pragma_table_info('primitives')").pluck().all();
    if (!columns.includes("durability")) this.db.exec("ALTER TABLE primitives ADD COLUMN durability TEXT");
    this.sync = syncs === undefined ? undefined : new ConnectionSync(this.db, path, syncs);
    this.audit = new SqliteAudit(join(dir, "audit.sqlite"), auditWriter);
    const db = this.db;
    this.stmts = {
      insertGroup: db.prepare("INSERT INTO groups (id, name, namespace, created_at) VALUES (?, ?, ?, ?)"),
      groupById: db.prepare("SELECT * FROM groups WHERE id = ?"),
      groupByName: db.prepare("SELECT * FROM groups WHERE name = ?"),
      listGroups: db.prepare("SELECT * FROM groups WHERE name > ? ORDER BY name LIMIT ?"),
      deletePrimitivesOfGroup: db.prepare("DELETE FROM primitives WHERE group_id = ?"),
      deleteGroup: db.prepare("DELETE FROM groups WHERE id = ?"),
      insertPrimitive: db.prepare(
        `INSERT INTO primitives (id, name, type, group_id, created_at, paused, forked_from, durability)
         VALUES (@id, @name, @type, @group_id, @created_at, @paused, @forked_from, @durability)`,
      ),
      primitiveById: db.prepare(`${PRIMITIVE_SELECT} WHERE p.id = ?`),
      countPrimitives: db.prepare("SELECT count(*) AS n FROM primitives WHERE group_id = ?"),
      primitivesNamed: db.prepare(`${PRIMITIVE_SELECT} WHERE p.group_id = ? AND p.name = ? ORDER BY p.id`),
      primitivesNamedOfType: db.prepare(
        `${PRIMITIVE_SELECT} WHERE p.group_id = ? AND p.name = ? AND p.type = ? ORDER BY p.id`,
      ),
      deletePrimitive: db.prepare("DELETE FROM primitives WHERE id = ?"),
    };
  }

  /** A catalog write: every cached record and lookup goes. */
  private changed(): void {
    this.cache.clear();
    this.lookups.clear();
  }

  private lookup<T extends GroupRecord | PrimitiveRecord[] | null>(key: string, load: () => T): T {
    if (this.lookups.has(key)) return this.lookups.get(key) as T;
    const value = load();
    if (this.lookups.size >= 10_000) this.lookups.clear();
    this.lookups.set(key, value);
    return value;
  }

  async createGroup(group: GroupRecord): Promise<void> {
    this.changed();
    try {
      this.stmts.insertGroup.run(group.id, group.name, group.namespace, group.created_at);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ServiceError("already_exists", `group '${group.name}' already exists`);
      throw err;
    }
  }

  async getGroup(idOrName: string): Promise<GroupRecord | null> {
    // An id is looked up as an id only, a name as a name only: never one row for the other.
    const statement = isGroupId(idOrName) ? this.stmts.groupById : this.stmts.groupByName;
    const group = this.lookup(`g:${idOrName}`, () => (statement.get(idOrName) as GroupRecord | undefined) ?? null);
    return group === null ? null : { ...group };
  }

  async listGroups(page: { after?: string; limit: number }): Promise<GroupRecord[]> {
    return this.stmts.listGroups.all(page.after ?? "", page.limit) as GroupRecord[];
  }

  async deleteGroup(id: string): Promise<void> {
    this.changed();
    this.db.transaction(() => {
      this.stmts.deletePrimitivesOfGroup.run(id);
      this.stmts.deleteGroup.run(id);
    })();
  }

  async createPrimitive(record: Omit<PrimitiveRecord, "group">): Promise<void> {
    this.changed();
    try {
      this.stmts.insertPrimitive.run({
        ...record,
        paused: record.paused ? 1 : 0,
        forked_from: record.forked_from === null ? null : JSON.stringify(record.forked_from),
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ServiceError(
          "already_exists",
          `a ${record.type} primitive named '${record.name}' already exists in the group`,
        );
      }
      throw err;
    }
  }

  cachedPrimitive(id: string): PrimitiveRecord | undefined {
    return this.cache.get(id);
  }

  async getPrimitive(id: string): Promise<PrimitiveRecord | null> {
    const cached = this.cache.get(id);
    if (cached !== undefined) return cached;
    const row = this.stmts.primitiveById.get(id) as PrimitiveRow | undefined;
    if (row === undefined) return null;
    return this.cache.keep(toPrimitive(row));
  }

  async listPrimitives(filter: {
    groupId?: string;
    type?: PrimitiveType;
    after?: string;
    limit: number;
  }): Promise<PrimitiveRecord[]> {
    const where = ["p.id > ?"];
    const args: unknown[] = [filter.after ?? ""];
    if (filter.groupId !== undefined) {
      where.push("p.group_id = ?");
      args.push(filter.groupId);
    }
    if (filter.type !== undefined) {
      where.push("p.type = ?");
      args.push(filter.type);
    }
    args.push(filter.limit);
    const sql = `${PRIMITIVE_SELECT} WHERE ${where.join(" AND ")} ORDER BY p.id LIMIT ?`;
    return (this.db.prepare(sql).all(...args) as PrimitiveRow[]).map(toPrimitive);
  }

  async primitivesNamed(groupId: string, name: string, type?: PrimitiveType): Promise<PrimitiveRecord[]> {
    const found = this.lookup(`n:${groupId}:${type ?? "*"}:${name}`, () => {
      const rows =
        type === undefined
          ? this.stmts.primitivesNamed.all(groupId, name)
          : this.stmts.primitivesNamedOfType.all(groupId, name, type);
      return (rows as PrimitiveRow[]).map(toPrimitive);
    });
    return found.map((p) => ({ ...p }));
  }

  async countPrimitives(groupId: string): Promise<number> {
    return (this.stmts.countPrimitives.get(groupId) as { n: number }).n;
  }

  async updatePrimitive(id: string, patch: PrimitivePatch): Promise<void> {
    const sets: string[] = [];
    const args: unknown[] = [];
    if (patch.name !== undefined) {
      sets.push("name = ?");
      args.push(patch.name);
    }
    if (patch.group_id !== undefined) {
      sets.push("group_id = ?");
      args.push(patch.group_id);
    }
    if (patch.paused !== undefined) {
      sets.push("paused = ?");
      args.push(patch.paused ? 1 : 0);
    }
    if (patch.durability !== undefined) {
      sets.push("durability = ?");
      args.push(patch.durability);
    }
    if (sets.length === 0) return;
    this.changed();
    try {
      this.db.prepare(`UPDATE primitives SET ${sets.join(", ")} WHERE id = ?`).run(...args, id);
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ServiceError(
          "already_exists",
          "a primitive of the same type and name already exists in the target group",
        );
      }
      throw err;
    }
  }

  async deletePrimitive(id: string): Promise<void> {
    this.changed();
    this.stmts.deletePrimitive.run(id);
  }

  async createSnapshot(record: SnapshotRecord): Promise<void> {
    try {
      this.db
        .prepare("INSERT INTO snapshots (id, primitive_id, name, created_at, blob_refs) VALUES (?, ?, ?, ?, ?)")
        .run(record.id, record.primitive_id, record.name, record.created_at, JSON.stringify(record.blob_refs));
    } catch (err) {
      if (isUniqueViolation(err)) throw new ServiceError("already_exists", `snapshot '${record.name}' already exists`);
      throw err;
    }
  }

  async listSnapshots(primitiveId: string, page: { before?: string; limit: number }): Promise<SnapshotRecord[]> {
    const rows = this.db
      .prepare("SELECT * FROM snapshots WHERE primitive_id = ? AND id < ? ORDER BY id DESC LIMIT ?")
      .all(primitiveId, page.before ?? "\uffff", page.limit) as SnapshotRow[];
    return rows.map(toSnapshot);
  }

  async findSnapshot(primitiveId: string, idOrName: string): Promise<SnapshotRecord | null> {
    const row = this.db
      .prepare("SELECT * FROM snapshots WHERE primitive_id = ? AND (id = ? OR name = ?) ORDER BY id = ? DESC LIMIT 1")
      .get(primitiveId, idOrName, idOrName, idOrName) as SnapshotRow | undefined;
    return row === undefined ? null : toSnapshot(row);
  }

  async deleteSnapshots(primitiveId: string): Promise<void> {
    this.db.prepare("DELETE FROM snapshots WHERE primitive_id = ?").run(primitiveId);
  }

  async snapshotBlobRefs(): Promise<Set<string>> {
    const refs = new Set<string>();
    for (const row of this.db.prepare("SELECT blob_refs FROM snapshots WHERE blob_refs != '[]'").pluck().iterate()) {
      for (const hash of JSON.parse(row as string) as string[]) refs.add(hash);
    }
    return refs;
  }

  async pruneAudit(before: number): Promise<number> {
    return this.audit.prune(before);
  }

  appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    return this.audit.append(entries);
  }

  async listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    return this.audit.list(filter);
  }

  synced(): Promise<void> | undefined {
    return this.sync?.covered();
  }

  async close(): Promise<void> {
    await this.audit.close();
    this.sync?.close();
    this.db.close();
  }
}
