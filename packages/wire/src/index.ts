// Prim's wire contract: what crosses between a caller and the engine (REST, MCP, the SDK, the
// remote Invoker). No runtime dependencies: a browser bundle or the SDK imports it without the
// engine. The Node-only HTTP client of the Invoker is `@prim/wire/invoke`.

export {
  ATTENUATED_PREFIX,
  type AttenuatedParts,
  attenuate,
  type Caveat,
  encodeCaveat,
  isAttenuatedToken,
  MAX_CAVEATS,
  parseAttenuated,
  parseCaveat,
  verifyAttenuated,
} from "./attenuation.js";
export { bearerToken, TOKEN68_RE } from "./bearer.js";
export {
  type ChangeFeed,
  type ChangeListener,
  type ChangeNotice,
  type ChangeSource,
  LocalChanges,
  noticeCovers,
} from "./changes.js";
export type {
  BatchEntryError,
  BatchResults,
  BranchInfo,
  ChangeEntry,
  ChangePage,
  ColumnInfo,
  ConsolidateResult,
  FetchResult,
  FileDownload,
  FsForkResult,
  Grant,
  GrantSummary,
  GroupArchive,
  ImportedPrimitive,
  ImportResult,
  ImportStatus,
  Job,
  JobStatus,
  KeyRevoked,
  MemoryRecord,
  MintedKey,
  MintedKeyInfo,
  ObjectPage,
  PresignResult,
  QueryResult,
  QueueCounts,
  RecalledMemory,
  SearchHit,
  SecretInfo,
  SecretListing,
  SecretRequest,
  SecretRequestStatus,
  SentJob,
  SettleAction,
  SnapshotInfo,
  Subscription,
  TableDetail,
  TableSummary,
  WhoAmI,
} from "./data-shapes.js";
export {
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  invalid,
  isServiceError,
  notFound,
  ServiceError,
  toServiceError,
} from "./errors.js";
export { type InvokeMeta, type Invoker, openGroup } from "./invoker.js";
export { isValidName, NAME_RE } from "./names.js";
export { isOperationName, OPERATION_NAMES, type OperationName } from "./operations.js";
export {
  isAccount,
  type KeyBudget,
  LOCAL_PRINCIPAL,
  narrowTools,
  type Principal,
  toolAllowed,
  toolPatternMatches,
} from "./principal.js";
export type { OperationResult, OperationResults } from "./results.js";
export { TOOL_CATALOG, type ToolInfo, type ToolName, toolInfo } from "./tools.js";
export {
  type AuditEntry,
  type ByteRange,
  DURABILITIES,
  type Durability,
  type ForkedFrom,
  type FsEntry,
  type FsRead,
  type GroupInfo,
  type KvEncoding,
  type KvEntry,
  type Manifest,
  type ObjectInfo,
  type ObjectRead,
  type Page,
  PRIMITIVE_TYPES,
  type PrimitiveInfo,
  type PrimitiveRef,
  type PrimitiveStats,
  type PrimitiveType,
  READ_TOOL,
  type ResolvedPrimitive,
  type Target,
} from "./types.js";
