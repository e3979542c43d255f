import { join } from "node:path";
import { type ChangeFeed, type Durability, LocalChanges } from "@prim/wire";
import { AUDIT_RETENTION_MS, AuditLog } from "./audit/audit-log.js";
import type { BlobStore } from "./blobs/blob-store.js";
import { BlobCollector } from "./blobs/collector.js";
import { LocalBlobStore } from "./blobs/local-blob-store.js";
import type { Catalog } from "./catalog/catalog.js";
import { AuditWriter } from "./catalog/sqlite-audit.js";
import { SqliteCatalog } from "./catalog/sqlite-catalog.js";
import { type Clock, systemClock } from "./core/clock.js";
import { readOrCreateKey } from "./core/key-file.js";
import { LocalKeyRing } from "./keys/keyring.js";
import { UrlSigner } from "./keys/signing.js";
import type { ChangeLogOptions } from "./primitives/changes/log.js";
import type { PrimitiveDefinition } from "./primitives/definition.js";
import { PrimitiveFiles } from "./primitives/files.js";
import type { Embedder } from "./primitives/memory/embedder.js";
import type { EngineServices } from "./primitives/services.js";
import { PRIMITIVE_DEFINITIONS } from "./registry.js";
import { SqlHost } from "./sql-host/pool.js";
import { DataDirLock } from "./sqlite/data-dir-lock.js";
import { SyncCounters } from "./sqlite/durable-sync.js";
import { privateDir } from "./sqlite/private-files.js";

/*
 * A cell is one process's shared infrastructure; a tenant (a workspace) is one Engine bound to
 * it. What is which, and why:
 *
 * Cell-wide (one per process, shared by every engine, closed only by `Cell.close`):
 * - the SQL host pool (the heavy part: child processes serving every db primitive),
 * - the audit writer thread (one worker appending to every tenant's `audit.sqlite`),
 * - the vault key ring (`master.key` + `keys.sqlite`; data keys are per primitive id, and ids
 *   are globally unique ULIDs, so one ring serves every workspace — the cloud's KMS); each
 *   tenant's transfer key is derived from it for that workspace alone,
 * - the URL signer (`signing.key`): a signature only says "this URL was issued here"; the
 *   engine that serves it still resolves the primitive through its own catalog,
 * - the clock and the data-directory lock (one process owns the whole tree).
 *
 * Per tenant (opened by `engineFor`, closed by that engine's `close`):
 * - the catalog view (`<tenant dir>/catalog.sqlite`, `audit.sqlite`) and its audit buffer
 *   (`AuditLog`: batching, flush on close, retention pruning of this tenant's entries),
 * - the primitive files (`<tenant dir>/primitives/`),
 * - the blob store and its collector: a collector deletes every blob its own catalog does not
 *   name, so it must only ever see its own tenant's blobs (`<tenant dir>/blobs/`); a blob
 *   namespace shared across tenants would let one tenant's collector delete another's data.
 * - the namespace (the workspace id) that principals are checked against.
 */

export interface CellOptions {
  /** The cell's directory: holds the key ring, the signing key, the lock and tenant directories. */
  dataDir: string;
  clock?: Clock;
  /** SQL host processes (default: `PRIM_SQL_HOSTS` if set, else DEFAULT_SQL_HOSTS). */
  sqlHosts?: number;
  /** Test-only: vault fetch may reach loopback addresses (127.0.0.0/8, ::1), nothing else private. */
  allowLoopbackFetch?: boolean;
  /**
   * The 32-byte key that wraps the vault's data keys (the cloud's `PRIM_MASTER_KEY`). Without
   * it the cell keeps one in `<dataDir>/master.key`, made on first start.
   */
  masterKey?: Buffer;
  /**
   * The key signed URLs are signed with. Cells that serve each other's workspaces share one
   * (the cloud derives it from `PRIM_MASTER_KEY`); without it the cell keeps
   * `<dataDir>/signing.key`, made on first start.
   */
  signingKey?: Buffer;
  /**
   * When writes are acknowledged (default `fast`): `durable` waits for the fsync that puts them
   * on stable storage. The engine-wide default; a primitive may set its own (PATCH).
   */
  durability?: Durability;
  /**
   * Where the tenants' engines publish change notices (EngineServices.changes): the cloud's
   * Redis feed; by default an in-process `LocalChanges` (`cell.changes`).
   */
  changes?: ChangeFeed;
}

/** What one tenant's engine is built from; every part is optional and has a local default. */
export interface TenantOptions {
  /** The tenant's directory (default `<cell dir>/<workspace id>/`). */
  dataDir?: string;
  /** The tenant's catalog view (default: SQLite in the tenant directory). */
  catalog?: Catalog;
  /** The tenant's blob store (default: a directory `blobs/` in the tenant directory). */
  blobs?: BlobStore;
  /** Audit buffer window in ms (default 10). */
  auditFlushMs?: number;
  /** How long audit entries are kept (default 30 days); older ones are pruned hourly. */
  auditRetentionMs?: number;
  /** Handles kept open (default 256). */
  maxOpenFiles?: number;
  /** Primitive types served (default: every implemented type). */
  definitions?: readonly PrimitiveDefinition[];
  /** Embeddings for memory recall (off by default: without it nothing calls the network). */
  embedder?: Embedder;
  /**
   * Change logs (primitives/changes/log.ts): retention per primitive (default 7 days or 100,000
   * entries, whichever is tighter); `enabled: false` records nothing — for benchmarks only.
   */
  changeLog?: ChangeLogOptions;
}

/** Workspace ids name directories, so they are restricted to a safe alphabet. */
const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `PRIM_SQL_HOSTS`, when it is a positive integer. */
function sqlHostsFromEnv(): number | undefined {
  const n = Number(process.env.PRIM_SQL_HOSTS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** What a cell needs of a tenant's engine: a way to close it. */
export interface TenantHandle {
  close(): Promise<void>;
}

/**
 * Shared infrastructure for many workspaces. Engines are built on it by
 * `Engine.forWorkspace(cell, workspaceId, parts)` (engine.ts), so this file needs no Engine.
 */
export class Cell {
  private readonly tenants = new Map<string, TenantHandle>();
  private closing: Promise<void> | null = null;

  private constructor(
    readonly dataDir: string,
    readonly clock: Clock,
    readonly sqlHost: SqlHost,
    readonly keyRing: LocalKeyRing,
    readonly signer: UrlSigner,
    readonly auditWriter: AuditWriter,
    private readonly allowLoopbackFetch: boolean,
    private readonly lock: DataDirLock,
    readonly durability: Durability,
    /** Where this cell's engines publish change notices (a listener in this process subscribes here). */
    readonly changes: ChangeFeed,
  ) {}

  /** The fsyncs of every tenant's durable writes (bench and stats read them). */
  readonly syncs = new SyncCounters();

  /** A cell on the local disk: locks `dataDir` (one process owns it) and starts the SQL hosts. */
  static openLocal(options: CellOptions): Cell {
    privateDir(options.dataDir);
    const lock = DataDirLock.acquire(options.dataDir);
    try {
      const clock = options.clock ?? systemClock;
      const sqlHost = new SqlHost({ size: options.sqlHosts ?? sqlHostsFromEnv() });
      const keyRing = new LocalKeyRing(options.dataDir, clock, options.masterKey);
      const signer = new UrlSigner(options.signingKey ?? readOrCreateKey(join(options.dataDir, "signing.key")));
      const auditWriter = new AuditWriter();
      const loopback = options.allowLoopbackFetch ?? false;
      const durability = options.durability ?? "fast";
      const changes = options.changes ?? new LocalChanges();
      return new Cell(
        options.dataDir,
        clock,
        sqlHost,
        keyRing,
        signer,
        auditWriter,
        loopback,
        lock,
        durability,
        changes,
      );
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /**
   * Services for workspace `workspaceId`, built from the cell's shared parts and the tenant's
   * own, handed to `build` with `release` (call it once the tenant's parts are closed). One
   * tenant per workspace at a time: a second open would put two catalogs on one file.
   */
  openTenant<T extends TenantHandle>(
    workspaceId: string,
    options: TenantOptions,
    build: (services: EngineServices, release: () => void) => T,
  ): T {
    if (this.closing !== null) throw new Error("the cell is closed");
    if (!WORKSPACE_ID.test(workspaceId)) throw new Error(`invalid workspace id '${workspaceId}'`);
    if (this.tenants.has(workspaceId)) throw new Error(`workspace '${workspaceId}' already has an open engine`);
    const dataDir = options.dataDir ?? join(this.dataDir, workspaceId);
    privateDir(dataDir); // one workspace's files: no other local user reads them
    const { clock } = this;
    const { durability, syncs } = this;
    const catalog =
      options.catalog ?? new SqliteCatalog(dataDir, this.auditWriter, durability === "durable" ? syncs : undefined);
    const definitions = new Map((options.definitions ?? PRIMITIVE_DEFINITIONS).map((d) => [d.type, d]));
    const vault = { keyRing: this.keyRing, allowLoopbackFetch: this.allowLoopbackFetch };
    const files = new PrimitiveFiles(
      dataDir,
      definitions,
      { clock, sqlHost: this.sqlHost, embedder: options.embedder, vault, durability, syncs },
      options.maxOpenFiles,
      options.changeLog,
    );
    const audit = new AuditLog(catalog, options.auditFlushMs);
    audit.keep(options.auditRetentionMs ?? AUDIT_RETENTION_MS, clock);
    const blobs = options.blobs ?? new LocalBlobStore(join(dataDir, "blobs"), clock);
    const services: EngineServices = {
      catalog,
      files,
      audit,
      clock,
      namespace: workspaceId,
      blobs,
      blobCollector: new BlobCollector(catalog, files, blobs, clock),
      signer: this.signer,
      transferKey: this.keyRing.transferKey(workspaceId),
      sqlHost: this.sqlHost,
      syncs,
      changes: this.changes,
    };
    const tenant = build(services, () => this.tenants.delete(workspaceId));
    this.tenants.set(workspaceId, tenant);
    return tenant;
  }

  /** Closes every open tenant engine, then the shared parts, then releases the directory. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.tenants.values()].map((engine) => engine.close()));
      await this.sqlHost.close();
      await this.auditWriter.stop();
      this.keyRing.close();
      this.lock.release();
    })();
    return this.closing;
  }
}
