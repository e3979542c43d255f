export { Engine, type LocalEngineOptions, type InvokeMeta } from "./engine.js";
export type { EngineServices } from "./engine-services.js";
export {
  ERROR_STATUS,
  ServiceError,
  isServiceError,
  toServiceError,
  invalid,
  notFound,
  type ErrorCode,
  type ErrorBody,
} from "./core/errors.js";
export { ulid, isUlid, prefixedId } from "./core/ids.js";
export { NAME_RE, isValidName } from "./core/names.js";
export { parseDuration, MAX_DURATION_MS } from "./core/duration.js";
export { LIST_PAGE, KEY_PAGE, encodeCursor, decodeCursor } from "./core/pagination.js";
export { type Clock, ManualClock, systemClock } from "./core/clock.js";
export {
  type Principal,
  LOCAL_PRINCIPAL,
  isAccount,
  narrowTools,
  toolAllowed,
  toolPatternMatches,
} from "./core/principal.js";
export * from "./core/types.js";
export type { Catalog, GroupRecord, PrimitiveRecord, AuditFilter } from "./catalog/catalog.js";
export { SqliteCatalog } from "./catalog/sqlite-catalog.js";
export { AuditLog } from "./audit/audit-log.js";
export { type Operation, type AnyOperation, type OpContext, defineOp } from "./ops/operation.js";
export { OPERATIONS } from "./ops/index.js";
export type { PrimitiveDefinition } from "./primitives/definition.js";
export { PRIMITIVE_DEFINITIONS } from "./primitives/index.js";
export { MAX_KEY_BYTES, MAX_VALUE_BYTES, MAX_KEYS_PER_CALL, MAX_MSET_ITEMS } from "./primitives/kv/index.js";
