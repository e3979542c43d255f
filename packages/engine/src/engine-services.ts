import type { AuditLog } from "./audit/audit-log.js";
import type { BlobStore } from "./blobs/blob-store.js";
import type { BlobCollector } from "./blobs/collector.js";
import type { Catalog, PrimitiveRecord } from "./catalog/catalog.js";
import type { Clock } from "./core/clock.js";
import type { PrimitiveInfo } from "./core/types.js";
import type { SqlHost } from "./primitives/db/sql-host.js";
import type { UrlSigner } from "./primitives/storage/signing.js";
import type { PrimitiveFiles } from "./storage/primitive-files.js";

/** Dependencies handed to every operation: a typed context, never module globals. */
export interface EngineServices {
  catalog: Catalog;
  files: PrimitiveFiles;
  audit: AuditLog;
  clock: Clock;
  /** `namespace` of Manifest: the workspace id in the cloud, `local` for the local engine. */
  namespace: string;
  blobs: BlobStore;
  blobCollector: BlobCollector;
  signer: UrlSigner;
  sqlHost: SqlHost;
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
  };
}
