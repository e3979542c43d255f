import type { ConsolidateResult } from "@prim/wire";
import { notFound, ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import { prefixedId } from "../../core/ids.js";
import { ResponseBudget } from "../../core/response-budget.js";
import { GroupCommit } from "../../sqlite/group-commit.js";
import type { ChangeLog } from "../changes/log.js";
import { type Cluster, type ClusterMember, findClusters } from "./consolidate.js";
import { type Embedder, encodeVector } from "./embedder.js";
import { StatementCache } from "./filter.js";
import { History, type VersionRow, versionBytes } from "./history.js";
import { type ListFilter, listMemories } from "./list.js";
import { buildFtsIndex, ftsIndexMissing, migrateMemoryFile } from "./migrate.js";
import { Recaller, type RecallHit, type RecallOptions } from "./recall.js";
import { type MemoryRecord, type MemoryRow, ROW_COLUMNS, toRecord } from "./record.js";
import { MEMORY_SCHEMA } from "./schema.js";
import { VectorIndex, type VectorIndexOptions } from "./vectors.js";
import { Vocabulary } from "./vocabulary.js";

export type { ConsolidateResult, ListFilter };

/** What a new memory is made of; `metadata` is already JSON text (size-checked). */
export interface NewMemory {
  kind: string;
  text: string;
  tags: string[];
  owner: string | null;
  metadata: string;
}

/** What an update (`remember` on an existing id) changes; what it leaves out stays. */
export interface MemoryUpdate {
  kind: string;
  text: string;
  tags?: string[] | undefined;
  owner?: string | undefined;
  metadata?: string | undefined;
}

/**
 * Bytes of a memory file SQLite reads through a memory map rather than read() calls: recall
 * with an embedder on 10,000 memories of 512-dimension vectors took p50 119 ms with the read()
 * calls, most of it paging 20 MB of rows through the 2 MB page cache. Address space only: the
 * pages are the OS's file cache, shared and reclaimable, not heap.
 */
export const MEMORY_MMAP_BYTES = 256 * 1024 * 1024;

/** The memory primitive over its SQLite file. Times come from the engine's clock. */
export class MemoryStore {
  private readonly stmts;
  private readonly listStmts: StatementCache;
  // Writes go through group commit: concurrent writers share one transaction and commit.
  private readonly writes: GroupCommit;
  private readonly recaller: Recaller;
  private readonly vocabulary: Vocabulary;
  private readonly history: History;
  private readonly vectors: VectorIndex;
  /** Rows in `memories`, kept in step with inserts and deletes. */
  private total: number;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
    /** The primitive's change log: `remember`, `supersede` (the old id, `by` the new), `forget`. */
    private readonly changes: ChangeLog,
    private readonly embedder?: Embedder,
    options: { vectors?: VectorIndexOptions } = {},
  ) {
    // Deleted rows are overwritten with zeros rather than left in free pages: forget means gone.
    db.pragma("secure_delete = ON");
    // Recall's exact vector path reads up to EXACT_SCAN_LIMIT rows of vectors; through SQLite's
    // default 2 MB page cache each page was a read() call (see MEMORY_MMAP_BYTES).
    db.pragma(`mmap_size = ${MEMORY_MMAP_BYTES}`);
    const ftsMissing = ftsIndexMissing(db);
    db.exec(MEMORY_SCHEMA);
    if (ftsMissing) buildFtsIndex(db);
    migrateMemoryFile(db);
    // Before History: its statements name the column the vector index adds to older files.
    this.vectors = new VectorIndex(db, new StatementCache(db), options.vectors);
    this.history = new History(db);
    this.stmts = {
      // A tombstone (forgotten_at set) is out of every read but history and as_of recall.
      get: db.prepare(`SELECT ${ROW_COLUMNS} FROM memories WHERE id = ? AND forgotten_at IS NULL`),
      insert: db.prepare(
        `INSERT INTO memories (id, kind, text, tags, owner, metadata, created_at, updated_at, superseded_by, supersedes, vector, valid_from)
         VALUES (@id, @kind, @text, @tags, @owner, @metadata, @now, @now, NULL, @supersedes, @vector, @now) RETURNING seq`,
      ),
      insertTag: db.prepare("INSERT OR IGNORE INTO memory_tags (tag, seq) VALUES (?, ?)"),
      // superseded_at keeps the first time: a splice re-points the link, the memory stays superseded.
      setSupersededBy: db.prepare(
        "UPDATE memories SET superseded_by = @by, updated_at = @now, superseded_at = coalesce(superseded_at, @now) WHERE id = @id",
      ),
      update: db.prepare(
        `UPDATE memories SET kind = @kind, text = @text, tags = @tags, owner = @owner, metadata = @metadata,
           updated_at = @now, valid_from = CASE WHEN @searchable THEN @now ELSE valid_from END WHERE seq = @seq`,
      ),
      setVector: db.prepare("UPDATE memories SET vector = ? WHERE seq = ?"),
      deleteTags: db.prepare("DELETE FROM memory_tags WHERE seq = ?"),
      tombstone: db.prepare("UPDATE memories SET forgotten_at = @now, updated_at = @now WHERE seq = @seq"),
      setSupersedes: db.prepare("UPDATE memories SET supersedes = ?, updated_at = ? WHERE id = ?"),
      countLive: db.prepare("SELECT count(*) AS n FROM memories WHERE superseded_by IS NULL AND forgotten_at IS NULL"),
      live: db.prepare(
        "SELECT seq, id, kind, owner, text FROM memories WHERE superseded_by IS NULL AND forgotten_at IS NULL ORDER BY seq",
      ),
    };
    this.writes = new GroupCommit(db);
    if (options.vectors?.background !== false) this.vectors.maintenance.start((step) => this.writes.run(step));
    this.listStmts = new StatementCache(db);
    this.vocabulary = new Vocabulary(db);
    this.total = (db.prepare("SELECT count(*) AS n FROM memories").get() as { n: number }).n;
    this.recaller = new Recaller(db, this.vocabulary, () => this.total, this.vectors);
    db.transaction(() => this.purge(clock.now()))();
  }

  /** Stops the vector index's steps (the file is closing). */
  close(): void {
    this.vectors.maintenance.stop();
  }

  /** One step of the vector index's training or list moves (tests); true while more remains. */
  maintainVectors(budgetMs?: number): Promise<boolean> {
    return this.writes.run(() => this.vectors.maintenance.step(budgetMs));
  }

  get hasEmbedder(): boolean {
    return this.embedder !== undefined;
  }

  private row(id: string): MemoryRow | undefined {
    return this.stmts.get.get(id) as MemoryRow | undefined;
  }

  get(id: string): MemoryRecord | null {
    const row = this.row(id);
    return row === undefined ? null : toRecord(row);
  }

  /** Stores a memory. Its embedding (if configured) is computed before the write begins. */
  async remember(memory: NewMemory): Promise<{ record: MemoryRecord; embedded: boolean }> {
    const vector = await this.embedOne(memory.text);
    // No savepoint (remember is the hot write): insert throws before writing, or not at all.
    const record = await this.writes.run(() => {
      const now = this.clock.now();
      this.purge(now);
      return this.insert(memory, [], vector, now);
    });
    return { record, embedded: vector !== null };
  }

  /**
   * Changes a live memory in place, a new version (`remember` on an existing id). With
   * `ifVersion`, only when the memory is at that version (else 412). A superseded memory is a
   * 409 (change the newest of its chain), a forgotten one a 404.
   */
  async update(
    id: string,
    patch: MemoryUpdate,
    ifVersion: number | undefined,
  ): Promise<{ record: MemoryRecord; embedded: boolean }> {
    const before = this.row(id);
    if (before === undefined) throw notFound(`memory '${id}'`);
    checkVersion(before, ifVersion); // before paying for an embedding
    const textChanged = patch.text !== before.text;
    const vector = textChanged ? await this.embedOne(patch.text) : null;
    const record = await this.writes.run(() =>
      this.db.transaction(() => {
        const old = this.row(id);
        if (old === undefined) throw notFound(`memory '${id}'`);
        checkVersion(old, ifVersion);
        if (old.superseded_by !== null) {
          throw new ServiceError("conflict", `memory '${id}' is superseded by '${old.superseded_by}'; change that one`);
        }
        const now = this.clock.now();
        const tags = patch.tags ?? (JSON.parse(old.tags) as string[]);
        const owner = patch.owner ?? old.owner;
        const tagsJson = JSON.stringify(tags);
        // What recall searches and filters on changes: the row as it was stays, as a past row.
        const searchable =
          patch.text !== old.text || patch.kind !== old.kind || tagsJson !== old.tags || owner !== old.owner;
        if (searchable) {
          this.history.keepPast(old.seq, now);
          this.vectors.maintenance.kick(); // the past row's vector gets its list after the write
          this.vocabulary.add(old.text); // the past row's words
          this.total++;
        }
        const version = this.history.change(id, "update", () => {
          if (patch.text !== old.text) {
            this.history.keepText(id, old.text);
            this.vocabulary.remove(old.text);
            this.vocabulary.add(patch.text);
            // The old text's vector no longer describes the memory; none is better than a wrong one.
            this.stmts.setVector.run(vector, old.seq);
            this.vectors.add(old.seq, vector);
          }
          this.stmts.update.run({
            seq: old.seq,
            kind: patch.kind,
            text: patch.text,
            tags: tagsJson,
            owner,
            metadata: patch.metadata ?? old.metadata,
            now,
            searchable: searchable ? 1 : 0,
          });
          this.stmts.deleteTags.run(old.seq);
          for (const tag of tags) this.stmts.insertTag.run(tag, old.seq);
        });
        this.changes.append("remember", id, { version, size: Buffer.byteLength(patch.text) });
        return toRecord(this.row(id) as MemoryRow);
      })(),
    );
    return { record, embedded: vector !== null };
  }

  private insert(memory: NewMemory, supersedes: string[], vector: Buffer | null, now: number): MemoryRecord {
    const id = prefixedId("mem", now);
    const supersedesJson = JSON.stringify(supersedes);
    const tagsJson = JSON.stringify(memory.tags);
    const { seq } = this.stmts.insert.get({
      ...memory,
      id,
      tags: tagsJson,
      supersedes: supersedesJson,
      vector,
      now,
    }) as { seq: number };
    for (const tag of memory.tags) this.stmts.insertTag.run(tag, seq);
    if (vector !== null) this.vectors.add(seq, vector);
    this.vocabulary.add(memory.text);
    this.total++;
    const extra = supersedes.length > 0 ? { supersedes } : undefined;
    this.changes.append("remember", id, { version: 1, size: Buffer.byteLength(memory.text), extra });
    return toRecord({
      ...memory,
      seq,
      id,
      tags: tagsJson,
      created_at: now,
      updated_at: now,
      superseded_by: null,
      supersedes: supersedesJson,
      version: 1,
    });
  }

  /**
   * Replaces a live memory by a new one (kind, tags and metadata default to the old one's; the
   * owner is kept). The old one stays, linked both ways. Superseding a memory that is already
   * superseded is a 409: supersede the newest of the chain instead.
   */
  async supersede(
    id: string,
    patch: { text: string; kind?: string | undefined; tags?: string[] | undefined; metadata?: string | undefined },
  ): Promise<MemoryRecord> {
    if (this.row(id) === undefined) throw notFound(`memory '${id}'`); // before paying for an embedding
    const vector = await this.embedOne(patch.text);
    return this.writes.run(() =>
      this.db.transaction(() => {
        const old = this.row(id);
        if (old === undefined) throw notFound(`memory '${id}'`);
        if (old.superseded_by !== null) {
          throw new ServiceError("conflict", `memory '${id}' is already superseded by '${old.superseded_by}'`);
        }
        const now = this.clock.now();
        const memory: NewMemory = {
          kind: patch.kind ?? old.kind,
          text: patch.text,
          tags: patch.tags ?? (JSON.parse(old.tags) as string[]),
          owner: old.owner,
          metadata: patch.metadata ?? old.metadata,
        };
        const record = this.insert(memory, [old.id], vector, now);
        this.supersedeBy(old.id, record.id, now);
        return record;
      })(),
    );
  }

  /**
   * Forgets a memory: it leaves every read but its history and `as_of` recall, a tombstone
   * until FORGOTTEN_RETENTION_MS later, when a write erases it (row, tags, both FTS indexes,
   * versions). Its place in a supersede chain is spliced: what it replaced now points to what
   * replaced it. When it was the newest of its chain, what it replaced stays superseded
   * (forgetting a fact does not bring back its older versions), its `superseded_by` still
   * naming the forgotten id.
   */
  forget(id: string): Promise<boolean> {
    return this.writes.run(() =>
      this.db.transaction(() => {
        const row = this.row(id);
        if (row === undefined) return false;
        const now = this.clock.now();
        const replaced = JSON.parse(row.supersedes) as string[];
        const successor = row.superseded_by === null ? undefined : this.row(row.superseded_by);
        if (successor !== undefined) {
          for (const pred of replaced) this.supersedeBy(pred, successor.id, now);
          const list = (JSON.parse(successor.supersedes) as string[]).flatMap((s) => (s === row.id ? replaced : [s]));
          this.setSupersedes(successor.id, list, now);
        }
        const version = this.history.change(row.id, "forget", () => this.stmts.tombstone.run({ seq: row.seq, now }));
        this.changes.append("forget", row.id, { version });
        this.purge(now);
        return true;
      })(),
    );
  }

  /** Memory `id` is now superseded by `by` (a change of its history). */
  private supersedeBy(id: string, by: string, now: number): void {
    const version = this.history.change(id, "supersede", () => this.stmts.setSupersededBy.run({ by, now, id }));
    this.changes.append("supersede", id, { version, extra: { by } });
  }

  /** Memory `id` now lists `list` as the memories it replaced (a change of its history). */
  private setSupersedes(id: string, list: string[], now: number): void {
    this.history.change(id, "supersede", () => this.stmts.setSupersedes.run(JSON.stringify(list), now, id));
  }

  /** Erases the tombstones past their retention (inside the caller's transaction). */
  private purge(now: number): void {
    this.total -= this.history.purge(now, (text) => this.vocabulary.remove(text));
  }

  /** A memory's history, newest first: versions before `beforeVersion`, `limit + 1` at most. */
  versions(id: string, beforeVersion: number, limit: number, budget = new ResponseBudget()): VersionRow[] {
    if (!this.history.exists(id)) throw notFound(`memory '${id}'`);
    const out: VersionRow[] = [];
    for (const row of this.history.page(id, beforeVersion, limit + 1)) {
      if (!budget.take(versionBytes(row))) break;
      out.push(row);
    }
    return out;
  }

  /** Memory `id` as it was at `at` (for `as_of` recall). */
  asOf(id: string, at: number): VersionRow | undefined {
    return this.history.asOf(id, at);
  }

  /**
   * Memories newest first, after `beforeSeq`; `limit + 1` rows at most (for the cursor). The
   * rows stop where the next one would not fit `budget` (`budget.cut` tells).
   */
  list(filter: ListFilter, beforeSeq: number, limit: number, budget = new ResponseBudget()): MemoryRow[] {
    return listMemories(this.listStmts, filter, beforeSeq, limit, budget);
  }

  /** Ranked recall; the query's embedding (if configured) is computed first. */
  async recall(options: Omit<RecallOptions, "queryVector">): Promise<RecallHit[]> {
    const queryVector = await this.embedOne(options.query);
    return this.recaller.recall({ ...options, queryVector });
  }

  /** Live memories: not superseded (forgotten ones are deleted). */
  countLive(): number {
    return (this.stmts.countLive.get() as { n: number }).n;
  }

  /**
   * Finds near-duplicate live memories (same kind and owner, similarity ≥ threshold), keeps
   * the newest of each cluster and supersedes the others by it, in one transaction.
   */
  consolidate(threshold: number): Promise<ConsolidateResult> {
    return this.writes.run(() =>
      this.db.transaction(() => {
        const members = this.stmts.live.all() as ClusterMember[];
        const clusters = findClusters(members, threshold);
        const now = this.clock.now();
        this.purge(now);
        const superseded: string[] = [];
        for (const cluster of clusters) superseded.push(...this.mergeCluster(cluster, now));
        superseded.sort();
        return { merged: clusters.length, superseded };
      })(),
    );
  }

  private mergeCluster(cluster: Cluster, now: number): string[] {
    const keeper = this.row(cluster.keeper.id) as MemoryRow;
    const others = cluster.others.map((m) => m.id);
    for (const id of others) this.supersedeBy(id, keeper.id, now);
    this.setSupersedes(keeper.id, [...(JSON.parse(keeper.supersedes) as string[]), ...others], now);
    return others;
  }

  /** The text's vector, or null without an embedder or when the embedder fails (fail open). */
  private async embedOne(text: string): Promise<Buffer | null> {
    if (this.embedder === undefined) return null;
    try {
      const [vector] = await this.embedder.embed([text]);
      return vector === undefined ? null : encodeVector(vector);
    } catch {
      // Recall must keep working when the embeddings endpoint is down: the lexical signals
      // still rank, and this memory simply has no vector.
      return null;
    }
  }
}

/** A failed `if_version`: 412, as kv's. */
function checkVersion(row: MemoryRow, expected: number | undefined): void {
  if (expected !== undefined && row.version !== expected) {
    throw new ServiceError(
      "precondition_failed",
      `memory '${row.id}' has version ${row.version}; if_version was ${expected}`,
    );
  }
}
