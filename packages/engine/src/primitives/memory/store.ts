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
import { Recaller, type RecallHit, type RecallOptions } from "./recall.js";
import { answerBytes, type MemoryRecord, type MemoryRow, ROW_COLUMNS, toRecord } from "./record.js";
import { MEMORY_SCHEMA } from "./schema.js";
import { Vocabulary } from "./vocabulary.js";

export type { ConsolidateResult };

/** What a new memory is made of; `metadata` is already JSON text (size-checked). */
export interface NewMemory {
  kind: string;
  text: string;
  tags: string[];
  owner: string | null;
  metadata: string;
}

export interface ListFilter {
  kind?: string | undefined;
  tag?: string | undefined;
  owner?: string | undefined;
}

/** The memory primitive over its SQLite file. Times come from the engine's clock. */
export class MemoryStore {
  private readonly stmts;
  private readonly listStmts = new Map<string, Database.Statement>();
  // Writes go through group commit: concurrent writers share one transaction and commit.
  private readonly writes: GroupCommit;
  private readonly recaller: Recaller;
  private readonly vocabulary: Vocabulary;
  /** Rows in `memories`, kept in step with inserts and deletes. */
  private total: number;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
    /** The primitive's change log: `remember`, `supersede` (the old id, `by` the new), `forget`. */
    private readonly changes: ChangeLog,
    private readonly embedder?: Embedder,
  ) {
    // Deleted rows are overwritten with zeros rather than left in free pages: forget means gone.
    db.pragma("secure_delete = ON");
    db.exec(MEMORY_SCHEMA);
    this.stmts = {
      get: db.prepare(`SELECT ${ROW_COLUMNS} FROM memories WHERE id = ?`),
      insert: db.prepare(
        `INSERT INTO memories (id, kind, text, tags, owner, metadata, created_at, updated_at, superseded_by, supersedes, vector)
         VALUES (@id, @kind, @text, @tags, @owner, @metadata, @now, @now, NULL, @supersedes, @vector) RETURNING seq`,
      ),
      insertTag: db.prepare("INSERT OR IGNORE INTO memory_tags (tag, seq) VALUES (?, ?)"),
      setSupersededBy: db.prepare("UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ?"),
      setSupersedes: db.prepare("UPDATE memories SET supersedes = ?, updated_at = ? WHERE id = ?"),
      delete: db.prepare("DELETE FROM memories WHERE seq = ?"),
      countLive: db.prepare("SELECT count(*) AS n FROM memories WHERE superseded_by IS NULL"),
      live: db.prepare("SELECT seq, id, kind, owner, text FROM memories WHERE superseded_by IS NULL ORDER BY seq"),
    };
    this.writes = new GroupCommit(db);
    this.vocabulary = new Vocabulary(db);
    this.total = (db.prepare("SELECT count(*) AS n FROM memories").get() as { n: number }).n;
    this.recaller = new Recaller(db, this.vocabulary, () => this.total);
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
    const record = await this.writes.run(() => this.insert(memory, [], vector, this.clock.now()));
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
    this.vocabulary.add(memory.text);
    this.total++;
    const extra = supersedes.length > 0 ? { supersedes } : undefined;
    this.changes.append("remember", id, { size: Buffer.byteLength(memory.text), extra });
    return toRecord({
      ...memory,
      seq,
      id,
      tags: tagsJson,
      created_at: now,
      updated_at: now,
      superseded_by: null,
      supersedes: supersedesJson,
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
        this.stmts.setSupersededBy.run(record.id, now, old.id);
        this.changes.append("supersede", old.id, { extra: { by: record.id } });
        return record;
      })(),
    );
  }

  /**
   * Deletes a memory for good (row, tags, both FTS indexes). Its place in a supersede chain is
   * spliced: what it replaced now points to what replaced it. When it was the newest of its
   * chain, what it replaced stays superseded (forgetting a fact does not bring back its older
   * versions), its `superseded_by` still naming the forgotten id.
   */
  forget(id: string): Promise<boolean> {
    return this.writes.run(() =>
      this.db.transaction(() => {
        const row = this.row(id);
        if (row === undefined) return false;
        const replaced = JSON.parse(row.supersedes) as string[];
        const successor = row.superseded_by === null ? undefined : this.row(row.superseded_by);
        if (successor !== undefined) {
          const now = this.clock.now();
          for (const pred of replaced) this.stmts.setSupersededBy.run(successor.id, now, pred);
          const list = (JSON.parse(successor.supersedes) as string[]).flatMap((s) => (s === row.id ? replaced : [s]));
          this.stmts.setSupersedes.run(JSON.stringify(list), now, successor.id);
        }
        this.stmts.delete.run(row.seq);
        this.changes.append("forget", row.id);
        this.vocabulary.remove(row.text);
        this.total--;
        return true;
      })(),
    );
  }

  /**
   * Memories newest first, after `beforeSeq`; `limit + 1` rows at most (for the cursor). The
   * rows stop where the next one would not fit `budget` (`budget.cut` tells).
   */
  list(filter: ListFilter, beforeSeq: number, limit: number, budget = new ResponseBudget()): MemoryRow[] {
    const where = ["m.seq < @before"];
    if (filter.kind !== undefined) where.push("m.kind = @kind");
    if (filter.owner !== undefined) where.push("m.owner = @owner");
    if (filter.tag !== undefined) where.push("m.seq IN (SELECT seq FROM memory_tags WHERE tag = @tag)");
    const sql = `SELECT ${ROW_COLUMNS.replace(/(\w+)/g, "m.$1")} FROM memories m
      WHERE ${where.join(" AND ")} ORDER BY m.seq DESC LIMIT @limit`;
    let stmt = this.listStmts.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.listStmts.set(sql, stmt);
    }
    const params: Record<string, unknown> = { before: beforeSeq, limit: limit + 1 };
    for (const key of ["kind", "owner", "tag"] as const) if (filter[key] !== undefined) params[key] = filter[key];
    const out: MemoryRow[] = [];
    for (const row of stmt.iterate(params) as IterableIterator<MemoryRow>) {
      if (!budget.take(answerBytes(row))) break;
      out.push(row);
    }
    return out;
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
    for (const id of others) {
      this.stmts.setSupersededBy.run(keeper.id, now, id);
      this.changes.append("supersede", id, { extra: { by: keeper.id } });
    }
    const list = [...(JSON.parse(keeper.supersedes) as string[]), ...others];
    this.stmts.setSupersedes.run(JSON.stringify(list), now, keeper.id);
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
