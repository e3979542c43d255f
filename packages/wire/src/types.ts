import type { Readable } from "node:stream";

/** Wire shapes from the spec's Shapes table; field names are exact. */

export const PRIMITIVE_TYPES = ["db", "fs", "queue", "memory", "vault", "kv", "storage"] as const;
export type PrimitiveType = (typeof PRIMITIVE_TYPES)[number];

export interface Manifest {
  id: string;
  namespace: string;
  name: string;
  created_at: number;
}

export interface GroupInfo extends Manifest {
  primitives: PrimitiveInfo[];
}

export interface ForkedFrom {
  id: string | null;
  name: string;
  type: PrimitiveType;
  group: string;
  snapshot: string | null;
}

/**
 * When a write is acknowledged: `fast` once committed (survives the process dying; an OS crash
 * or power cut can lose the last acknowledged commits), `durable` once on stable storage (the
 * commit's fsync returned).
 */
export const DURABILITIES = ["fast", "durable"] as const;
export type Durability = (typeof DURABILITIES)[number];

export interface PrimitiveInfo {
  id: string;
  name: string;
  type: PrimitiveType;
  group: string;
  created_at: number;
  paused: boolean;
  size_bytes: number;
  forked_from: ForkedFrom | null;
  /** The primitive's effective durability: its own setting, else the engine's. */
  durability: Durability;
}

export interface PrimitiveStats {
  id: string;
  name: string;
  type: PrimitiveType;
  size_bytes: number;
  items: number;
  paused: boolean;
  durability: Durability;
}

export type KvEncoding = "json" | "bytes";

export interface KvEntry {
  key: string;
  /** Omitted from listings unless `values=true`. */
  value?: unknown;
  encoding: KvEncoding;
  version: number;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface AuditEntry {
  id: string;
  ts: number;
  group: string;
  /**
   * The primitive's type, or the text `group` for group events, or `workspace` for the cloud's
   * control-plane entries (CLOUD.md: "Audit of the control plane"; `group` is then empty).
   */
  primitive: PrimitiveType | "group" | "workspace";
  primitive_id: string | null;
  instance: string | null;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** The allowlist tool that reads each type (stats needs it). */
export const READ_TOOL: Readonly<Record<PrimitiveType, string>> = {
  db: "db_query",
  fs: "fs_read",
  queue: "queue_receive",
  memory: "memory_recall",
  vault: "vault_list",
  kv: "kv_get",
  storage: "storage_read",
};

export interface ObjectInfo {
  key: string;
  size: number;
  etag: string;
  content_type: string;
  metadata: Record<string, string>;
  created_at: number;
  updated_at: number;
}

/** A directory or file as callers see it (listing entries and `stat=1`). */
export interface FsEntry {
  path: string;
  name: string;
  type: "file" | "dir";
  size: number;
  /** Octal permission string, e.g. `644`. */
  mode: string;
  /** Last modification, ms since the epoch. */
  mtime: number;
  /** Quoted sha256 of the contents; null for directories. */
  etag: string | null;
}

/** What a read answers: file bytes, one entry (`stat=1`) or a listing. */
export type FsRead =
  | {
      kind: "file";
      entry: FsEntry;
      content_type: string;
      /** Null for HEAD. */
      body: Readable | Buffer | null;
    }
  | { kind: "entry"; entry: FsEntry }
  | { kind: "list"; data: FsEntry[]; truncated: boolean };

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** What a read answers: the REST layer turns it into status, headers and body. */
export interface ObjectRead {
  info: ObjectInfo;
  status: 200 | 206 | 304;
  range: ByteRange | null;
  /** Null for HEAD, `stat` and 304. */
  body: Readable | Buffer | null;
}

/**
 * A primitive named the way a caller knows it (MCP's `primitive` argument: an id, or a name of
 * `type` in `group`), resolved by the engine inside the call it targets, so a tool call is one
 * invocation rather than a lookup and then the call.
 */
export interface PrimitiveRef {
  /** The group's id or name. */
  group: string;
  ref: string;
  type?: PrimitiveType;
}

/** What an operation is asked about: a primitive's id, a group's id or name, a reference, nothing. */
export type Target = string | PrimitiveRef | null;

/** What `primitive.resolve` answers: enough to name the primitive as a target. */
export interface ResolvedPrimitive {
  id: string;
  type: PrimitiveType;
  name: string;
}
