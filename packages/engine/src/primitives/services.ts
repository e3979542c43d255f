import type { ChangeFeed, PrimitiveInfo } from "@prim/wire";
import type { SecretExportPolicy } from "../archive/secret-export.js";
import type { AuditLog } from "../audit/audit-log.js";
import type { BlobStore } from "../blobs/blob-store.js";
import type { BlobCollector } from "../blobs/collector.js";
import type { Catalog, PrimitiveRecord } from "../catalog/catalog.js";
import type { Clock } from "../core/clock.js";
import type { UrlSigner } from "../keys/signing.js";
import type { TransferKey } from "../keys/transfer.js";
import type { SqlHost } from "../sql-host/pool.js";
import type { SyncCounters } from "../sqlite/durable-sync.js";
import type { PrimitiveFiles } from "./files.js";

/**
 * Dependencies handed to every operation: a typed context, never module globals. An engine is
 * bound to one workspace (tenant); `Cell` (cell.ts) builds these from a cell's shared parts and
 * the tenant's own, and `new Engine(services)` accepts any composition that keeps this split.
 */
export interface EngineServices {
  /** Tenant: the workspace's own catalog view; every resolve goes through it and nothing else. */
  catalog: Catalog;
  /** Tenant: primitive files under the workspace's data directory. */
  files: PrimitiveFiles;
  /** Tenant: buffers audit entries into this catalog. */
  audit: AuditLog;
  /** Cell. */
  clock: Clock;
  /**
   * Tenant: the workspace id (`local` for the local engine). Principals of another workspace
   * are refused; it is also the `namespace` of Manifest.
   */
  namespace: string;
  /** Tenant: its collector deletes what this catalog does not name, so it must not be shared. */
  blobs: BlobStore;
  /** Tenant: sweeps `blobs` against `catalog` and `files`. */
  blobCollector: BlobCollector;
  /** Cell: signs and checks URLs; the primitive a URL names is still resolved per tenant. */
  signer: UrlSigner;
  /** Cell: seals and opens group archives' vault values (derived from the master key). */
  transferKey: TransferKey;
  /** Cell: the SQL host pool serving every db primitive; an engine never closes it. */
  sqlHost: SqlHost;
  /** Cell: the fsyncs durable writes waited for. */
  syncs: SyncCounters;
  /**
   * Cell: where `invoke` publishes the files and objects a write changed (operations declare
   * them: `changes`); in process a `LocalChanges`, in the cloud a Redis channel per workspace.
   */
  changes: ChangeFeed;
  /**
   * Cloud: who may export vault values for a key other than the workspace's own (ops/archive.ts);
   * absent in the local engine, which always may (archive/secret-export.ts).
   */
  secretExport?: SecretExportPolicy | undefined;
}

export function primitiveInfo(services: EngineServices, p: PrimitiveRecord): PrimitiveInfo {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    group: p.group,
    created_at: p.created_at,
    paused: p.paused,
    size_bytes: services.files.sizeBytes(p.id, p.type),
    forked_from: p.forked_from,
    durability: services.files.durabilityOf(p),
  };
}
