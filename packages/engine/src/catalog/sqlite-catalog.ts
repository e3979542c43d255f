import Database from "better-sqlite3";
import { ServiceError } from "../core/errors.js";
import type { AuditEntry, PrimitiveType } from "../core/types.js";
import { openSqlite } from "../storage/sqlite.js";
import type { AuditFilter, Catalog, GroupRecord, PrimitiveRecord } from "./catalog.js";

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
  UNIQUE (group_id, type, name)
);
CREATE TABLE IF NOT EXISTS audit (
  id TEXT PRIMARY KEY,
  ts INTEGER NOT NULL,
  group_name TEXT NOT NULL,
  primitive TEXT NOT NULL,
  primitive_id TEXT,
  instance TEXT,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_by_primitive ON audit (primitive_id, id);
CREATE INDEX IF NOT EXISTS audit_by_group ON audit (group_name, id);
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
}

interface AuditRow extends Omit<AuditEntry, "group" | "detail" | "primitive"> {
  group_name: string;
  primitive: AuditEntry["primitive"];
  detail: string | null;
}

const PRIMITIVE_SELECT = `SELECT p.id, p.name, p.type, p.group_id, g.name AS group_name, p.created_at,
  p.paused, p.forked_from FROM primitives p JOIN groups g ON g.id = p.group_id`;

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
  };
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Database.SqliteError && err.code.startsWith("SQLITE_CONSTRAINT");
}

/** Escapes LIKE wildcards so a prefix filter matches literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The local engine's catalog: one SQLite file beside the primitives' files. */
export class SqliteCatalog implements Catalog {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(path: string) {
    this.db = openSqlite(path);
    this.db.exec(SCHEMA);
    const db = this.db;
    this.stmts = {
      insertGroup: db.prepare("INSERT INTO groups (id, name, namespace, created_at) VALUES (?, ?, ?, ?)"),
      groupById: db.prepare("SELECT * FROM groups WHERE id = ? OR name = ?"),
      listGroups: db.prepare("SELECT * FROM groups WHERE name > ? ORDER BY name LIMIT ?"),
      deletePrimitivesOfGroup: db.prepare("DELETE FROM primitives WHERE group_id = ?"),
      deleteGroup: db.prepare("DELETE FROM groups WHERE id = ?"),
      insertPrimitive: db.prepare(
        `INSERT INTO primitives (id, name, type, group_id, created_at, paused, forked_from)
         VALUES (@id, @name, @type, @group_id, @created_at, @paused, @forked_from)`,
      ),
      primitiveById: db.prepare(`${PRIMITIVE_SELECT} WHERE p.id = ?`),
      countPrimitives: db.prepare("SELECT count(*) AS n FROM primitives WHERE group_id = ?"),
      deletePrimitive: db.prepare("DELETE FROM primitives WHERE id = ?"),
      insertAudit: db.prepare(
        `INSERT INTO audit (id, ts, group_name, primitive, primitive_id, instance, actor, action, target, detail)
         VALUES (@id, @ts, @group, @primitive, @primitive_id, @instance, @actor, @action, @target, @detail)`,
      ),
    };
  }

  async createGroup(group: GroupRecord): Promise<void> {
    try {
      this.stmts.insertGroup.run(group.id, group.name, group.namespace, group.created_at);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ServiceError("already_exists", `group '${group.name}' already exists`);
      throw err;
    }
  }

  async getGroup(idOrName: string): Promise<GroupRecord | null> {
    return (this.stmts.groupById.get(idOrName, idOrName) as GroupRecord | undefined) ?? null;
  }

  async listGroups(page: { after?: string; limit: number }): Promise<GroupRecord[]> {
    return this.stmts.listGroups.all(page.after ?? "", page.limit) as GroupRecord[];
  }

  async deleteGroup(id: string): Promise<void> {
    this.db.transaction(() => {
      this.stmts.deletePrimitivesOfGroup.run(id);
      this.stmts.deleteGroup.run(id);
    })();
  }

  async createPrimitive(record: Omit<PrimitiveRecord, "group">): Promise<void> {
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

  async getPrimitive(id: string): Promise<PrimitiveRecord | null> {
    const row = this.stmts.primitiveById.get(id) as PrimitiveRow | undefined;
    return row === undefined ? null : toPrimitive(row);
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

  async countPrimitives(groupId: string): Promise<number> {
    return (this.stmts.countPrimitives.get(groupId) as { n: number }).n;
  }

  async updatePrimitive(id: string, patch: { name?: string; group_id?: string; paused?: boolean }): Promise<void> {
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
    if (sets.length === 0) return;
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
    this.stmts.deletePrimitive.run(id);
  }

  async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    this.db.transaction(() => {
      for (const e of entries) {
        this.stmts.insertAudit.run({ ...e, detail: e.detail === null ? null : JSON.stringify(e.detail) });
      }
    })();
  }

  async listAudit(filter: AuditFilter): Promise<AuditEntry[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      args.push(...values);
    };
    if (filter.group !== undefined) add("group_name = ?", filter.group);
    if (filter.type !== undefined) add("primitive = ?", filter.type);
    if (filter.primitive !== undefined) add("primitive_id = ?", filter.primitive);
    if (filter.action !== undefined) {
      const a = filter.action;
      if (a.endsWith("*")) add("action LIKE ? ESCAPE '\\'", likePrefix(a.slice(0, -1)));
      else if (a.endsWith(".")) add("action LIKE ? ESCAPE '\\'", likePrefix(a));
      else add("action = ?", a);
    }
    if (filter.actor !== undefined) {
      const a = filter.actor;
      if (a.endsWith("*")) add("actor LIKE ? ESCAPE '\\'", likePrefix(a.slice(0, -1)));
      else add("actor = ?", a);
    }
    if (filter.since !== undefined) add("ts >= ?", filter.since);
    if (filter.until !== undefined) add("ts <= ?", filter.until);
    if (filter.before !== undefined) add("id < ?", filter.before);
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, filter.limit) as AuditRow[];
    return rows.map(({ group_name, detail, ...rest }) => ({
      ...rest,
      group: group_name,
      detail: detail === null ? null : JSON.parse(detail),
    }));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
