import {
  type AuditFilter,
  type AuditRecord,
  type Catalog,
  type GroupRecord,
  isGroupId,
  PrimitiveCache,
  type PrimitivePatch,
  type PrimitiveRecord,
  type SnapshotRecord,
} from "@prim/engine";
import { type AuditEntry, type PrimitiveType, ServiceError } from "@prim/wire";
import type pg from "pg";
import { auditWhere, toAudit } from "./audit-sql.js";
import { insertWithinPlan } from "./plan-caps.js";

/** What a catalog needs of its process's hub (catalog-hub.ts): the pool and cache invalidation. */
export interface CatalogHubPort {
  readonly pool: pg.Pool;
  /** Tells every process (this one too) that `workspace`'s catalog rows changed. */
  changed(workspace: string): Promise<void>;
  /** Makes sure today's audit partitions exist (once a day per process). */
  auditPartitions(times?: readonly number[]): Promise<void>;
  /**
   * Whether cached records may be served: only while the hub hears every change (its LISTEN
   * connection is up). While it is down, every lookup reads Postgres.
   */
  readonly caching: boolean;
  /**
   * Whether creates hold to the workspace's plan (Starter's primitive and group caps, checked in
   * the insert's transaction): on where the cloud enforces limits.
   */
  readonly planCaps: boolean;
}

interface PrimitiveRow {
  id: string;
  name: string;
  type: PrimitiveType;
  group_id: string;
  group_name: string;
  created_at: string;
  paused: boolean;
  forked_from: PrimitiveRecord["forked_from"];
  durability: PrimitiveRecord["durability"];
}

const PRIMITIVE_SELECT = `SELECT p.id, p.name, p.type, p.group_id, g.name AS group_name, p.created_at, p.paused,
  p.forked_from, p.durability FROM primitives p JOIN groups g ON g.id = p.group_id`;

const toPrimitive = (row: PrimitiveRow): PrimitiveRecord => ({
  id: row.id,
  name: row.name,
  type: row.type,
  group_id: row.group_id,
  group: row.group_name,
  created_at: Number(row.created_at),
  paused: row.paused,
  forked_from: row.forked_from,
  durability: row.durability,
});

const toGroup = (row: { id: string; name: string; namespace: string; created_at: string }): GroupRecord => ({
  id: row.id,
  name: row.name,
  namespace: row.namespace,
  created_at: Number(row.created_at),
});

interface SnapshotRow {
  id: string;
  primitive_id: string;
  name: string | null;
  created_at: string;
  blob_refs: string[] | null;
}

const toSnapshot = (row: SnapshotRow): SnapshotRecord => ({
  id: row.id,
  primitive_id: row.primitive_id,
  name: row.name,
  created_at: Number(row.created_at),
  blob_refs: row.blob_refs ?? [],
});

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "23505";

/**
 * The engine's `Catalog` in Postgres, bound to one workspace: every statement names
 * `workspace_id`, so no call can reach another workspace's rows, even by id. Primitive records
 * are cached in memory (every request resolves its primitive); a write here or in any other
 * process drops this workspace's cache through the hub's NOTIFY, so a rename, move, pause or
 * delete elsewhere is seen by the next request once the notification has arrived (it is sent
 * at commit, before the writer answers).
 */
export class PgCatalog implements Catalog {
  private readonly cache = new PrimitiveCache();
  /** Groups by id and by name, and primitives by name, dropped with the records (a reference's lookups). */
  private readonly lookups = new Map<string, GroupRecord | PrimitiveRecord[] | null>();
  private readonly pool: pg.Pool;

  constructor(
    private readonly hub: CatalogHubPort,
    readonly workspace: string,
  ) {
    this.pool = hub.pool;
  }

  /** Drops every cached record (the hub calls it when another process changed this workspace). */
  invalidate(): void {
    this.cache.clear();
    this.lookups.clear();
  }

  /** A lookup answered from memory while the hub hears every change, else from Postgres. */
  private async lookup<T extends GroupRecord | PrimitiveRecord[] | null>(
    key: string,
    load: () => Promise<T>,
  ): Promise<T> {
    if (!this.hub.caching) return load();
    if (this.lookups.has(key)) return this.lookups.get(key) as T;
    const value = await load();
    if (this.lookups.size >= 10_000) this.lookups.clear();
    this.lookups.set(key, value);
    return value;
  }

  /** A write (or, with `counted`, a create within the plan's count cap of that table). */
  private async write(
    sql: string,
    args: unknown[],
    clash?: string,
    counted?: "primitives" | "groups",
  ): Promise<pg.QueryResult> {
    this.invalidate();
    try {
      if (counted === undefined || !this.hub.planCaps) return await this.pool.query(sql, args);
      return await insertWithinPlan(this.pool, this.workspace, counted, (client) => client.query(sql, args));
    } catch (err) {
      if (clash !== undefined && isUniqueViolation(err)) throw new ServiceError("already_exists", clash);
      throw err;
    } finally {
      await this.hub.changed(this.workspace);
    }
  }

  async createGroup(group: GroupRecord): Promise<void> {
    await this.write(
      "INSERT INTO groups (id, workspace_id, name, namespace, created_at) VALUES ($1, $2, $3, $4, $5)",
      [group.id, this.workspace, group.name, group.namespace, group.created_at],
      `group '${group.name}' already exists`,
      "groups",
    );
  }

  async getGroup(idOrName: string): Promise<GroupRecord | null> {
    const group = await this.lookup(`g:${idOrName}`, async () => {
      // An id is looked up as an id only, a name as a name only: never one row for the other.
      const column = isGroupId(idOrName) ? "id" : "name";
      const { rows } = await this.pool.query(
        `SELECT id, name, namespace, created_at FROM groups WHERE workspace_id = $1 AND ${column} = $2`,
        [this.workspace, idOrName],
      );
      return rows[0] === undefined ? null : toGroup(rows[0]);
    });
    return group === null ? null : { ...group };
  }

  async listGroups(page: { after?: string; limit: number }): Promise<GroupRecord[]> {
    const { rows } = await this.pool.query(
      `SELECT id, name, namespace, created_at FROM groups WHERE workspace_id = $1 AND name COLLATE "C" > $2
       ORDER BY name COLLATE "C" LIMIT $3`,
      [this.workspace, page.after ?? "", page.limit],
    );
    return rows.map(toGroup);
  }

  async deleteGroup(id: string): Promise<void> {
    // Its primitives' rows go with it (ON DELETE CASCADE).
    await this.write("DELETE FROM groups WHERE workspace_id = $1 AND id = $2", [this.workspace, id]);
  }

  async createPrimitive(record: Omit<PrimitiveRecord, "group">): Promise<void> {
    await this.write(
      `INSERT INTO primitives (id, workspace_id, name, type, group_id, created_at, paused, forked_from, durability)
       SELECT $1, $2, $3, $4, g.id, $6, $7, $8, $9 FROM groups g WHERE g.workspace_id = $2 AND g.id = $5`,
      [
        record.id,
        this.workspace,
        record.name,
        record.type,
        record.group_id,
        record.created_at,
        record.paused,
        record.forked_from === null ? null : JSON.stringify(record.forked_from),
        record.durability,
      ],
      `a ${record.type} primitive named '${record.name}' already exists in the group`,
      "primitives",
    );
  }

  cachedPrimitive(id: string): PrimitiveRecord | undefined {
    return this.hub.caching ? this.cache.get(id) : undefined;
  }

  async getPrimitive(id: string): Promise<PrimitiveRecord | null> {
    const cached = this.cachedPrimitive(id);
    if (cached !== undefined) return cached;
    const { rows } = await this.pool.query<PrimitiveRow>(
      `${PRIMITIVE_SELECT} WHERE p.workspace_id = $1 AND p.id = $2`,
      [this.workspace, id],
    );
    if (rows[0] === undefined) return null;
    const record = toPrimitive(rows[0]);
    return this.hub.caching ? this.cache.keep(record) : record;
  }

  async listPrimitives(filter: { groupId?: string; type?: PrimitiveType; after?: string; limit: number }) {
    const args: unknown[] = [this.workspace, filter.after ?? ""];
    const where = ["p.workspace_id = $1", 'p.id COLLATE "C" > $2'];
    if (filter.groupId !== undefined) where.push(`p.group_id = $${args.push(filter.groupId)}`);
    if (filter.type !== undefined) where.push(`p.type = $${args.push(filter.type)}`);
    const sql = `${PRIMITIVE_SELECT} WHERE ${where.join(" AND ")} ORDER BY p.id COLLATE "C" LIMIT $${args.push(filter.limit)}`;
    return (await this.pool.query<PrimitiveRow>(sql, args)).rows.map(toPrimitive);
  }

  async primitivesNamed(groupId: string, name: string, type?: PrimitiveType): Promise<PrimitiveRecord[]> {
    const found = await this.lookup(`n:${groupId}:${type ?? "*"}:${name}`, async () => {
      const args: unknown[] = [this.workspace, groupId, name];
      const typed = type === undefined ? "" : ` AND p.type = $${args.push(type)}`;
      const sql = `${PRIMITIVE_SELECT} WHERE p.workspace_id = $1 AND p.group_id = $2 AND p.name = $3${typed} ORDER BY p.id COLLATE "C"`;
      return (await this.pool.query<PrimitiveRow>(sql, args)).rows.map(toPrimitive);
    });
    return found.map((p) => ({ ...p }));
  }

  async countPrimitives(groupId: string): Promise<number> {
    const { rows } = await this.pool.query(
      "SELECT count(*)::int AS n FROM primitives WHERE workspace_id = $1 AND group_id = $2",
      [this.workspace, groupId],
    );
    return rows[0].n;
  }

  async updatePrimitive(id: string, patch: PrimitivePatch): Promise<void> {
    const args: unknown[] = [this.workspace, id];
    const sets: string[] = [];
    if (patch.name !== undefined) sets.push(`name = $${args.push(patch.name)}`);
    if (patch.paused !== undefined) sets.push(`paused = $${args.push(patch.paused)}`);
    if (patch.durability !== undefined) sets.push(`durability = $${args.push(patch.durability)}`);
    // A move names a group of the same workspace, or changes nothing.
    if (patch.group_id !== undefined) {
      sets.push(`group_id = (SELECT id FROM groups WHERE workspace_id = $1 AND id = $${args.push(patch.group_id)})`);
    }
    if (sets.length === 0) return;
    await this.write(
      `UPDATE primitives SET ${sets.join(", ")} WHERE workspace_id = $1 AND id = $2`,
      args,
      "a primitive of the same type and name already exists in the target group",
    );
  }

  async deletePrimitive(id: string): Promise<void> {
    await this.write("DELETE FROM primitives WHERE workspace_id = $1 AND id = $2", [this.workspace, id]);
  }

  async createSnapshot(record: SnapshotRecord): Promise<void> {
    try {
      await this.pool.query(
        `INSERT INTO snapshots (id, workspace_id, primitive_id, name, created_at, blob_refs) VALUES ($1, $2, $3, $4, $5, $6)`,
        [record.id, this.workspace, record.primitive_id, record.name, record.created_at, record.blob_refs],
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw new ServiceError("already_exists", `snapshot '${record.name}' already exists`);
      throw err;
    }
  }

  async listSnapshots(primitiveId: string, page: { before?: string; limit: number }): Promise<SnapshotRecord[]> {
    const { rows } = await this.pool.query<SnapshotRow>(
      `SELECT * FROM snapshots WHERE workspace_id = $1 AND primitive_id = $2 AND id COLLATE "C" < $3
       ORDER BY id COLLATE "C" DESC LIMIT $4`,
      [this.workspace, primitiveId, page.before ?? "\uffff", page.limit],
    );
    return rows.map(toSnapshot);
  }

  async findSnapshot(primitiveId: string, idOrName: string): Promise<SnapshotRecord | null> {
    const { rows } = await this.pool.query<SnapshotRow>(
      `SELECT * FROM snapshots WHERE workspace_id = $1 AND primitive_id = $2 AND (id = $3 OR name = $3)
       ORDER BY id = $3 DESC LIMIT 1`,
      [this.workspace, primitiveId, idOrName],
    );
    return rows[0] === undefined ? null : toSnapshot(rows[0]);
  }

  async deleteSnapshots(primitiveId: string): Promise<void> {
    await this.pool.query("DELETE FROM snapshots WHERE workspace_id = $1 AND primitive_id = $2", [
      this.workspace,
      primitiveId,
    ]);
  }

  async snapshotBlobRefs(): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ ref: string }>(
      "SELECT DISTINCT unnest(blob_refs) AS ref FROM snapshots WHERE workspace_id = $1",
      [this.workspace],
    );
    return new Set(rows.map((r) => r.ref));
  }

  /**
   * One statement per batch (the engine's AuditLog buffers ~10 ms of entries), the batch as one
   * JSON parameter: JSON.stringify is native, where eleven text arrays are escaped element by
   * element in JavaScript on the request path's thread.
   */
  async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const batch = JSON.stringify(
      entries.map((e) => ({
        ts: e.ts,
        id: e.id,
        group: e.group,
        primitive: e.primitive,
        primitive_id: e.primitive_id,
        instance: e.instance,
        actor: e.actor,
        action: e.action,
        target: e.target,
        detail: e.detail,
      })),
    );
    const insert = () =>
      this.pool.query(
        `INSERT INTO audit (ts, id, workspace_id, group_name, primitive, primitive_id, instance, actor, action, target, detail)
         SELECT ts, id, $1, "group", primitive, primitive_id, instance, actor, action, target, detail
         FROM jsonb_to_recordset($2::jsonb) AS t(ts bigint, id text, "group" text, primitive text, primitive_id text,
                                                 instance text, actor text, action text, target text, detail jsonb)
         ON CONFLICT (ts, id) DO NOTHING`,
        [this.workspace, batch],
      );
    await insert().catch(async (err: { code?: string }) => {
      if (err.code !== "23514") throw err; // "no partition of relation found for row": make its day's
      await this.hub.auditPartitions(entries.map((e) => e.ts));
      await insert();
    });
  }

  async listAudit(filter: AuditFilter): Promise<AuditRecord[]> {
    const { where, args } = auditWhere(this.workspace, filter);
    const { rows } = await this.pool.query(
      `SELECT * FROM audit WHERE ${where} ORDER BY seq DESC LIMIT $${args.push(filter.limit)}`,
      args,
    );
    return rows.map(toAudit);
  }

  /** Drops whole days past retention (all workspaces) and this workspace's older entries. */
  async pruneAudit(before: number): Promise<number> {
    await this.hub.auditPartitions();
    const { rowCount } = await this.pool.query("DELETE FROM audit WHERE workspace_id = $1 AND ts < $2", [
      this.workspace,
      before,
    ]);
    return rowCount ?? 0;
  }

  /** The pool and the listener belong to the hub; a workspace's catalog holds nothing to close. */
  async close(): Promise<void> {
    this.cache.clear();
  }
}
