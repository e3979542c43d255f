// The wire contract (errors, principals, response shapes, the Invoker) is part of the engine's API.

export * from "@prim/wire";
export { MANIFEST_ENTRY } from "./archive/group-archive.js";
export { recipientFingerprint, type SecretExportPolicy } from "./archive/secret-export.js";
export { BLOCK as TAR_BLOCK, padding as tarPadding, parseHeader as parseTarHeader } from "./archive/tar.js";
export { AuditLog } from "./audit/audit-log.js";
export type { BlobStore, Ingested, IngestOptions } from "./blobs/blob-store.js";
export { LocalBlobStore } from "./blobs/local-blob-store.js";
export { type Spooled, spoolUpload } from "./blobs/spool.js";
export type {
  AuditFilter,
  AuditRecord,
  Catalog,
  GroupRecord,
  PrimitivePatch,
  PrimitiveRecord,
  SnapshotRecord,
} from "./catalog/catalog.js";
export { PrimitiveCache } from "./catalog/primitive-cache.js";
export { SqliteCatalog } from "./catalog/sqlite-catalog.js";
export { Cell, type CellOptions, type TenantHandle, type TenantOptions } from "./cell.js";
export type { ConsistencyReport } from "./consistency.js";
export { type Clock, ManualClock, systemClock } from "./core/clock.js";
export { MAX_DURATION_MS, parseDuration } from "./core/duration.js";
export { isGroupId, isUlid, prefixedId, randomToken, ulid } from "./core/ids.js";
export { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "./core/json-depth.js";
export { readOrCreateKey } from "./core/key-file.js";
export { decodeCursor, encodeCursor, KEY_PAGE, LIST_PAGE } from "./core/pagination.js";
export { RAW_JSON, rawJsonOf, type WithRawJson } from "./core/raw-json.js";
export { MAX_RESPONSE_BYTES_PER_CALL } from "./core/response-budget.js";
export { Engine, LOCAL_WORKSPACE, type LocalEngineOptions } from "./engine.js";
export { context as sealingContext, type Sealed, seal, unseal } from "./keys/cipher.js";
export type { WrappedGroupKey } from "./keys/keyring.js";
export { type SignedGrant, UrlSigner } from "./keys/signing.js";
export { unwrapArchiveKey, type WrappedArchiveKey } from "./keys/transfer.js";
export type { LimitCall, Limiter } from "./limits.js";
export { ARCHIVE_TTL_MS, UPLOAD_TTL_MS } from "./ops/archive.js";
export type { FileDownload } from "./ops/export.js";
export { type ChangeLogOptions, type ChangeRetention, DEFAULT_CHANGE_RETENTION } from "./primitives/changes/log.js";
export { MAX_RESULT_BYTES, MAX_RESULT_ROWS, STATEMENT_TIMEOUT_MS } from "./primitives/db/index.js";
export { MAX_BATCH_STATEMENTS, MAX_SQL_CHARS } from "./primitives/db/ops.js";
export type { PrimitiveDefinition } from "./primitives/definition.js";
export { FS_CREATED, MAX_FILE_BYTES, MAX_PATH_BYTES } from "./primitives/fs/index.js";
export { MAX_KEY_BYTES, MAX_KEYS_PER_CALL, MAX_MSET_ITEMS, MAX_VALUE_BYTES } from "./primitives/kv/index.js";
export {
  CONSOLIDATE_THRESHOLD,
  decodeVector,
  type Embedder,
  embedderFromSettings,
  encodeVector,
  IVF_MIN_VECTORS,
  IVF_NPROBE,
  MAX_MEMORY_METADATA_BYTES,
  MAX_TAGS,
  MAX_TEXT_BYTES,
  type MemoryRecord,
  OpenAiEmbedder,
  openVectorIndex,
  type RecalledMemory,
} from "./primitives/memory/index.js";
export {
  type Access,
  type AnyOperation,
  accessOf,
  type DataContext,
  type DataOperation,
  dataOp,
  type GroupContext,
  type GroupOperation,
  groupOp,
  mayWrite,
  type OpContext,
  type Operation,
  type PrimitiveContext,
  type PrimitiveOperation,
  primitiveOp,
  type UntargetedOperation,
  untargetedOp,
  writesStorage,
} from "./primitives/operation.js";
export {
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  type Job,
  type JobStatus,
  MAX_BATCH,
  MAX_BODY_BYTES,
  MAX_LEASE_MS,
  MAX_RECEIVE,
  MAX_WAIT_MS,
  type QueueCounts,
} from "./primitives/queue/index.js";
export type { EngineServices } from "./primitives/services.js";
export {
  INLINE_OBJECT_BYTES,
  MAX_METADATA_BYTES,
  MAX_OBJECT_BYTES,
  MAX_OBJECT_KEY_BYTES,
  MAX_PRESIGN_MS,
  MAX_SIGNED_USES,
  type PresignResult,
  SIGNED_URL_PRINCIPAL,
  type StorageStore,
} from "./primitives/storage/index.js";
export {
  type FetchResult,
  type Grant,
  type GrantSummary,
  type KeyRing,
  LocalKeyRing,
  MAX_FETCH_TIMEOUT_MS,
  MAX_GRANT_HOSTS,
  MAX_PENDING_REQUESTS,
  MAX_REASON_CHARS,
  MAX_REDIRECTS,
  MAX_REQUEST_BODY_BYTES,
  MAX_RESPONSE_BYTES,
  MAX_SECRET_BYTES,
  SECRET_NAME_RE,
  SECRET_REQUEST_ID_RE,
  SECRET_REQUEST_TTL_MS,
  type SecretInfo,
  type SecretListing,
  type SecretRequest,
  type VaultEnv,
} from "./primitives/vault/index.js";
export { guardedGet, guardedPost, type OutboundResponse } from "./primitives/vault/outbound.js";
export { OPERATIONS, PRIMITIVE_DEFINITIONS } from "./registry.js";
export { processAlive } from "./sqlite/data-dir-lock.js";
export { SyncCounters } from "./sqlite/durable-sync.js";
export { openSqlite } from "./sqlite/sqlite.js";
