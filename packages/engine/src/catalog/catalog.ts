import type { AuditEntry, Durability, ForkedFrom, PrimitiveType } from "@prim/wire";

export interface GroupRecord {
  id: string;
  name: string;
  namespace: string;
  created_at: number;
}

export interface PrimitiveRecord {
  id: string;
  name: string;
  type: PrimitiveType;
  group_id: string;
  /** The group's name (joined), as PrimitiveInfo shows it. */
  group: string;
  created_at: number;
  paused: boolean;
  forked_from: ForkedFrom | null;
  /** The primitive's own durability setting; null follows the engine's. */
  durability: Durability | null;
}

/** What `updatePrimitive` may change. */
export interface PrimitivePatch {
  name?: string;
  group_id?: string;
  paused?: boolean;
  /** null clears the primitive's own setting. */
  durability?: Durability | null;
}

/** A snapshot of a primitive: its file lives under the engine's snapshot directory. */
export interface SnapshotRecord {
  id: string;
  primitive_id: string;
  /** The caller's label, or null. Unique per primitive. */
  name: string | null;
  created_at: number;
  /** Blob hashes the snapshot's file names (kept by blob collection). */
  blob_refs: string[];
}

/** An audit entry with its position in the trail (for cursors). */
export interface AuditRecord extends AuditEntry {
  seq: number;
}

export interface AuditFilter {
  group?: string;
  type?: string;
  primitive?: string;
  /** Exact action, or a prefix when it ends in `.` or `*`. */
  action?: string;
  /** Exact actor, or a prefix when it ends in `*`. */
  actor?: string;
  since?: number;
  until?: number;
  /** Entries before this sequence number (newest-first paging). */
  beforeSeq?: number;
  limit: number;
}

/**
 * Groups, primitives and the audit trail. Local: a SQLite file; cloud: Postgres. Methods that
 * create rows throw ServiceError `already_exists` on a name clash.
 */
export interface Catalog {
  createGroup(group: GroupRecord): Promise<void>;
  /** By id or by name. */
  getGroup(idOrName: string): Promise<GroupRecord | null>;
  /** Ordered by name; `after` is the last name of the previous page. */
  listGroups(page: { after?: string; limit: number }): Promise<GroupRecord[]>;
  /** Deletes the group and every primitive row in it. */
  deleteGroup(id: string): Promise<void>;

  createPrimitive(record: Omit<PrimitiveRecord, "group">): Promise<void>;
  getPrimitive(id: string): Promise<PrimitiveRecord | null>;
  /** A primitive already held in memory, without a round trip; optional fast path. */
  cachedPrimitive?(id: string): PrimitiveRecord | undefined;
  /** Ordered by id (creation order); `after` is the last id of the previous page. */
  listPrimitives(filter: {
    groupId?: string;
    type?: PrimitiveType;
    after?: string;
    limit: number;
  }): Promise<PrimitiveRecord[]>;
  /** The group's primitives called `name` (of `type` when given): how a reference is resolved. */
  primitivesNamed(groupId: string, name: string, type?: PrimitiveType): Promise<PrimitiveRecord[]>;
  countPrimitives(groupId: string): Promise<number>;
  updatePrimitive(id: string, patch: PrimitivePatch): Promise<void>;
  deletePrimitive(id: string): Promise<void>;

  /** Throws `already_exists` when the primitive already has a snapshot with that label. */
  createSnapshot(record: SnapshotRecord): Promise<void>;
  /** Newest first; `before` is the last id of the previous page. */
  listSnapshots(primitiveId: string, page: { before?: string; limit: number }): Promise<SnapshotRecord[]>;
  /** By id or label. */
  findSnapshot(primitiveId: string, idOrName: string): Promise<SnapshotRecord | null>;
  deleteSnapshots(primitiveId: string): Promise<void>;
  /** Every blob hash some snapshot names. */
  snapshotBlobRefs(): Promise<Set<string>>;

  appendAudit(entries: readonly AuditEntry[]): Promise<void>;
  listAudit(filter: AuditFilter): Promise<AuditRecord[]>;
  /** Deletes audit entries older than `before` (ms); returns how many. */
  pruneAudit(before: number): Promise<number>;

  /**
   * Resolves once every catalog write made so far is on stable storage; undefined when nothing
   * is left to wait for (nothing written since, or a catalog that is durable by itself: Postgres).
   */
  synced?(): Promise<void> | undefined;

  close(): Promise<void>;
}

/** All of a group's primitives, in creation order (read in pages of 500). */
export async function allPrimitivesOf(catalog: Catalog, groupId: string): Promise<PrimitiveRecord[]> {
  const out: PrimitiveRecord[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await catalog.listPrimitives({ groupId, after, limit: 500 });
    out.push(...page);
    if (page.length < 500) return out;
    after = page[page.length - 1]?.id;
  }
}
