// Every wire type (KvEntry, Job, MemoryRecord, OperationResult, ...): the answers this client returns.
export type * from "@prim/wire";
export type { KeyRevoked, MintedKey, MintedKeyInfo } from "@prim/wire";
// Offline attenuation: narrow a key (or a pa_ token) by caveats without calling the API.
export { attenuate, type Caveat, encodeCaveat, parseCaveat, verifyWebhook } from "@prim/wire";
export { type ChangeReadOptions, type ChangeTarget, iterateChanges, readChanges } from "./changes.js";
export { type AuditFilter, type ForkOptions, PrimClient } from "./client.js";
export {
  type BranchOption,
  DbClient,
  type EnqueueMessage,
  type SqlParams,
  type Statement,
  type WriteOptions,
} from "./db.js";
export { PrimError } from "./errors.js";
export { FsClient, type FsListing } from "./fs.js";
export { KeysClient, type MintOptions } from "./keys.js";
export { KvClient, type KvListOptions, type KvSetItem, type KvSetOptions } from "./kv.js";
export { MemoryClient, type MemoryFilter, type NewMemory, type RecallOptions } from "./memory.js";
export { everyItem, type PageOptions } from "./pages.js";
export {
  type Duration,
  type Lease,
  QueueClient,
  type ReceiveOptions,
  type SendOptions,
  type SettleOptions,
} from "./queue.js";
export { SignedUrls } from "./signed.js";
export {
  type GetObjectOptions,
  type ObjectListOptions,
  type PresignOptions,
  type PutObjectOptions,
  StorageClient,
} from "./storage.js";
export {
  type ClientOptions,
  encodePath,
  type Query,
  type RawBody,
  type RequestOptions,
  Transport,
} from "./transport.js";
export { type GrantInput, type SecretAuth, VaultClient, type VaultFetchRequest } from "./vault.js";
export { type WebhookOptions, WebhooksClient } from "./webhooks.js";
