import type { ErrorCode } from "./errors.js";
import type { KeyBudget } from "./principal.js";
import type { GroupInfo, ObjectInfo, PrimitiveType } from "./types.js";

/**
 * The per-type answers the spec leaves open ("Fields not covered above"), as the engine sends
 * them. The REST layer's response schemas and the SDK's return types are these; the engine's
 * operations are checked against them when it compiles (see results.ts).
 */

// db

/** The spec's query result; `last_insert_rowid` is a string past 2^53. */
export interface QueryResult {
  columns: string[];
  rows: Record<string, unknown>[];
  rows_affected: number;
  last_insert_rowid: number | string | null;
  truncated: boolean;
}

export interface TableSummary {
  name: string;
  type: "table" | "view";
}

export interface ColumnInfo {
  name: string;
  type: string;
  notnull: boolean;
  default: string | null;
  pk: number;
}

export interface TableDetail extends TableSummary {
  sql: string;
  columns: ColumnInfo[];
}

export interface BranchInfo {
  name: string;
  created_at: number;
  /** Whether main changed since the branch was made (promote would need `force`). */
  main_changed: boolean;
}

// fs

export interface SearchHit {
  path: string;
  /** Text around the hit, matched words wrapped in `**`. */
  snippet: string;
}

/** What `POST /forks` answers: the new directory and how many files it holds. */
export interface FsForkResult {
  path: string;
  files: number;
}

// queue

export type JobStatus = "ready" | "leased" | "done" | "dead";

export type SettleAction = "ack" | "retry" | "fail" | "dead";

/** A job; received jobs add `lease_token`. */
export interface Job {
  id: string;
  queue: string;
  body: unknown;
  status: JobStatus;
  priority: number;
  attempts: number;
  max_attempts: number;
  available_at: number;
  lease_expires_at: number | null;
  last_error: string | null;
  dedupe_key: string | null;
  created_at: number;
  updated_at: number;
  lease_token?: string;
}

/** A send's answer: the job, and whether `dedupe_key` matched a pending one (then 200). */
export type SentJob = Job & { deduplicated: boolean };

/**
 * One entry of a batch that failed on its own (the others went on): the error the single
 * route would have answered, with its HTTP status (400, 404, 409, 410, 413).
 */
export interface BatchEntryError {
  error: { code: ErrorCode; message: string };
  status: number;
}

/** A batch's answer: one entry per item sent, in the order sent. */
export interface BatchResults<T> {
  data: (T | BatchEntryError)[];
}

export interface QueueCounts {
  name: string;
  ready: number;
  /** Ready jobs whose `delay` or retry backoff has not yet passed (included in `ready`). */
  delayed: number;
  leased: number;
  done: number;
  dead: number;
}

export interface Subscription {
  topic: string;
  queue: string;
  created_at: number;
}

// memory

export interface MemoryRecord {
  id: string;
  kind: string;
  text: string;
  tags: string[];
  owner: string | null;
  metadata: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  /** The memory that replaced this one, or null while it is live. */
  superseded_by: string | null;
  /** The memories this one replaced (by supersede or consolidate), oldest first. */
  supersedes: string[];
  /** Counts the memory's changes: 1 when made; `remember` with `if_version` compares it. */
  version: number;
}

/** What a change to a memory was. */
export type MemoryVersionOp = "create" | "update" | "supersede" | "forget";

/** One entry of a memory's history: the memory as it was right after change `op`, made `at`. */
export type MemoryVersion = MemoryRecord & { op: MemoryVersionOp; at: number };

/** A recalled memory with its score (0..1, 1 = ranked first by every signal). */
export type RecalledMemory = MemoryRecord & { score: number };

export interface ConsolidateResult {
  /** Clusters of near-duplicates merged into their newest member. */
  merged: number;
  /** Ids of the memories superseded, in creation order. */
  superseded: string[];
}

// vault

export interface GrantSummary {
  hosts: string[];
  /** null: every method. */
  methods: string[] | null;
  /** null: no expiry. */
  expires_at: number | null;
}

export interface Grant extends GrantSummary {
  name: string;
  created_at: number;
}

/** A secret as listed: never its value. */
export interface SecretInfo {
  name: string;
  version: number;
  created_at: number;
  updated_at: number;
}

/** Where a secret request stands: waiting for a human, answered (set or declined), or past its expiry. */
export type SecretRequestStatus = "pending" | "set" | "declined" | "expired";

/**
 * An agent's request that a human store a secret (`vault_request_secret`): the name, why, and
 * the grant it proposes; the human answers on a page (the dashboard, or the local engine's).
 * Never carries a value: the value goes from the page straight into the vault.
 */
export interface SecretRequest {
  /** `sreq_` + 128 random bits: the page's address names it (with `primitive`). */
  id: string;
  /** The vault primitive's id. */
  primitive: string;
  /** The secret to set. */
  name: string;
  /** The agent's words, shown to the human as its claim (untrusted text). */
  reason: string;
  /** The grant set with the value (hosts and methods it may be sent to), or null: none proposed. */
  allow: { hosts: string[]; methods: string[] | null } | null;
  status: SecretRequestStatus;
  /** Audit actor of the credential that asked (`key:…`, `local`, `user:…`). */
  requested_by: string;
  created_at: number;
  expires_at: number;
  /** When and by whom it was set or declined (null while pending or expired). */
  answered_at: number | null;
  answered_by: string | null;
  /** The secret's version the answer stored (status `set`), else null. */
  version: number | null;
}

export interface SecretListing extends SecretInfo {
  grant: GrantSummary | null;
  /**
   * True for a secret imported from a group archive made without vault values: it has a name,
   * a version and a grant but no value, and using it answers 409 `conflict` until a put sets one.
   */
  needs_value: boolean;
}

/** What fetch answers: the upstream's status, headers and body, with the secret redacted. */
export interface FetchResult {
  status: number;
  headers: Record<string, string | string[]>;
  /** UTF-8 text, or base64 when the body is not valid UTF-8 (`encoding` says which). */
  body: string;
  encoding: "utf8" | "base64";
}

// storage

export interface ObjectPage {
  data: ObjectInfo[];
  /** With `delimiter`: the common prefixes rolled up on this page. */
  prefixes: string[];
  next_cursor: string | null;
}

export interface PresignResult {
  /** Absolute over REST (the engine's answer is a path the transport completes). */
  url: string;
  method: "GET" | "PUT";
  headers: Record<string, string>;
  expires_at: number;
  /** Present when the URL was signed with `max_uses`: the successful requests it allows. */
  max_uses?: number;
}

// lifecycle

export interface SnapshotInfo {
  id: string;
  /** The label, or null. */
  name: string | null;
  created_at: number;
  /** The primitive's id. */
  primitive: string;
}

/** An export: a temporary file the transport streams and then deletes. */
export interface FileDownload {
  download: { path: string; filename: string; contentType: string };
}

/**
 * A group archive ready to download (`GET /v1/groups/{group}/export`): kept on the server until
 * `expires_at`, so a dropped download resumes with `?archive=<id>` and a `Range` header.
 */
export interface GroupArchive {
  archive: { id: string; path: string; size: number; sha256: string; filename: string; expires_at: number };
}

/** One primitive an import wrote: a new primitive, or one replaced in place (`--replace`). */
export interface ImportedPrimitive {
  id: string;
  name: string;
  type: PrimitiveType;
  /** The primitive's id where the archive was made (also in `forked_from` of a new one). */
  source_id: string;
  /** For a primitive replaced in place: the snapshot taken of what it held before. */
  replaced: { snapshot: string } | null;
}

/** The answer of `POST /v1/groups/{group}/import`. */
export interface ImportResult {
  group: GroupInfo;
  imported: ImportedPrimitive[];
  sha256: string;
  bytes: number;
}

/** `GET /v1/groups/{group}/import`: whom to seal an archive's vault for, and an upload's progress. */
export interface ImportStatus {
  /** This engine's transfer key (X25519, base64url): an export for it names it as `recipient`. */
  recipient: string;
  /** The unfinished upload of the archive named by `sha256`, if one is here. */
  upload: { sha256: string; received: number } | null;
}

/** `GET /v1/whoami`: who the credential is, without anything secret. */
export interface WhoAmI {
  workspace: string;
  /** The workspace's name (cloud keys); null where there is none (the local engine). */
  workspace_name: string | null;
  actor: string;
  /** `workspace`: every group and tool; `scoped`: narrower; `local`: tokenless local access. */
  kind: "workspace" | "scoped" | "local";
  group: { id: string; name: string } | null;
  tools: string[] | null;
  /** Read-only: every call that writes is refused (403 `forbidden`), whatever the tools. */
  read_only: boolean;
}

/**
 * What `POST /v1/keys` and the MCP tool `key_mint` take (cloud): the child's properties, each
 * omitted one the parent's; none may be wider than the parent's (403 `forbidden` naming it).
 */
export interface KeyMintRequest {
  name?: string;
  /** A group name or id; null: every group (only from a parent for every group). */
  group?: string | null;
  tools?: string[];
  read_only?: boolean;
  /** Ms since the epoch, no later than the parent's own expiry. */
  expires_at?: number;
  /** CIDRs, each inside one of the parent's (when it has an allowlist). */
  ip_allow?: string[];
  /** Operations it may spend; under a budgeted parent required, of its kind and carved out of what it has left. */
  budget?: KeyBudget;
}

/** What a minted key shows of itself, minted or listed. */
export interface MintedKeyShape {
  id: string;
  name: string | null;
  group: string | null;
  tools: string[] | null;
  read_only: boolean;
  /** Ms since the epoch, or null: never (the parent's unless asked for less). */
  expires_at: number | null;
  ip_allow: string[] | null;
  /** What it may spend, carved out of a budgeted parent's; null: no budget of its own. */
  budget: KeyBudget | null;
  /** The id of the key that minted it. */
  parent: string;
  created_at: number;
}

/** What `POST /v1/keys` answers (cloud): the minted key itself, shown this once. */
export interface MintedKey extends MintedKeyShape {
  key: string;
}

/** A key in the caller's subtree, as `GET /v1/keys` lists it (never the key or its hash). */
export interface MintedKeyInfo extends MintedKeyShape {
  /** The key's first 8 characters. */
  start: string;
  depth: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** What `DELETE /v1/keys/{id}` answers. */
export interface KeyRevoked {
  id: string;
  revoked_at: number;
  /** Every key revoked by this call: the key, then the keys under it. */
  revoked: string[];
}

/**
 * One committed change of a primitive's data, from its change log: what changed, never a value
 * (never a vault value). The subject is named by the type's own word: `key` (kv, storage),
 * `path` (fs), `id` (queue jobs, memories), `name` (vault secrets), `queue` (a queue purge),
 * `table` (db).
 */
export interface ChangeEntry {
  /** The primitive's id and type (a group feed merges several). */
  primitive: string;
  type: PrimitiveType;
  /**
   * The log's epoch: a new one starts when the primitive's data is replaced (a restore, promote
   * or import), and its `seq`s may then repeat earlier ones. `primitive`, `epoch` and `seq`
   * together name a change uniquely (a webhook's `webhook-id` is `<primitive>.<epoch>.<seq>`).
   */
  epoch: number;
  /** Position in the primitive's log: grows by one per change, in commit order. */
  seq: number;
  /** When it committed, ms since the epoch. */
  ts: number;
  /** kv: set, delete, expire; fs: write, mkdir, delete, rename, copy; storage: put, delete; queue: send, ack, retry, dead, requeue, purge; memory: remember (a new memory, or a change of one), supersede, forget; vault: set, rotate, delete, grant, revoke; db: exec. */
  op: string;
  key?: string;
  path?: string;
  id?: string;
  name?: string;
  queue?: string;
  table?: string;
  /** The version written (kv, vault, memory: the memory's version after the change) or removed (kv delete, expire). */
  version?: number;
  /** Bytes written (kv value, file, object, job body, memory text). */
  size?: number;
  /** What else the op says: fs rename/copy `to`, storage copy `from`, queue `queue`, memory `by`/`supersedes`, db `rows`. */
  detail?: Record<string, unknown>;
  /** Resume right after this entry (`after=`; the SSE event id). */
  cursor: string;
}

/** A read of a change feed: entries after the cursor given, and where to resume. */
export interface ChangePage {
  data: ChangeEntry[];
  /** After the last entry answered (the cursor given when there was none). */
  cursor: string;
}

/** Which changes a webhook endpoint receives (cloud); each omitted field passes everything. */
export interface WebhookFilter {
  /** Primitive types. */
  types?: string[];
  /** Change operations (`set`, `delete`, …). */
  ops?: string[];
  /** Only changes whose key, path, id or table starts with it. */
  prefix?: string;
}

/** A webhook endpoint as listed (never its secret). */
export interface WebhookInfo {
  id: string;
  url: string;
  /** The group's name for a group's endpoint, else null. */
  group: string | null;
  /** The primitive's id for one primitive's endpoint, else null. */
  primitive: string | null;
  filter: WebhookFilter | null;
  description: string | null;
  created_at: number;
  /** Since when its deliveries fail (null: the last one succeeded). */
  failing_since: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
}

/** What creating an endpoint answers: its signing secret (`whsec_…`), shown this once. */
export interface WebhookCreated extends WebhookInfo {
  secret: string;
}

/** One delivery of an endpoint's log. */
export interface WebhookDelivery {
  id: string;
  /** The `webhook-id` it is sent with (a redelivery's row adds `#<its id>`). */
  message_id: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  last_attempt_at: number | null;
  /** When the next attempt is due (pending only). */
  next_attempt_at: number | null;
  delivered_at: number | null;
}
