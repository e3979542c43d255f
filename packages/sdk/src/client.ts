import type {
  AuditEntry,
  ChangeEntry,
  ChangePage,
  GroupInfo,
  Manifest,
  Page,
  PrimitiveInfo,
  PrimitiveStats,
  PrimitiveType,
  SnapshotInfo,
} from "@prim/wire";
import { type ChangeReadOptions, type ChangeTarget, iterateChanges, readChanges } from "./changes.js";
import { DbClient } from "./db.js";
import { FsClient } from "./fs.js";
import { KeysClient } from "./keys.js";
import { KvClient } from "./kv.js";
import { MemoryClient } from "./memory.js";
import { everyItem, type PageOptions } from "./pages.js";
import { seg } from "./primitive-client.js";
import { QueueClient } from "./queue.js";
import { SignedUrls } from "./signed.js";
import { StorageClient } from "./storage.js";
import { type ClientOptions, Transport } from "./transport.js";
import { VaultClient } from "./vault.js";
import { WebhooksClient } from "./webhooks.js";

/** Audit filters (combinable); `action` and `actor` take a prefix ending in `*` (or `.`). */
export interface AuditFilter {
  group?: string;
  type?: PrimitiveType | "group";
  primitive?: string;
  action?: string;
  actor?: string;
  /** Inclusive, ms since the epoch. */
  since?: number;
  until?: number;
}

export interface ForkOptions {
  /** Default `<name>-fork-<6 chars>`. */
  name?: string;
  /** Default the source's group. */
  group?: string;
  /** Fork from this snapshot (label or id) instead of live data. */
  snapshot?: string;
}

/** Typed client for the Prim REST API: the local engine (`prim dev`) or the cloud (`token`). */
export class PrimClient {
  readonly transport: Transport;
  /** Downloads and uploads through signed URLs (no credential: the URL is one). */
  readonly signed: SignedUrls;
  /** Minted keys (cloud): mint narrower keys, list and revoke the ones under this key. */
  readonly keys: KeysClient;
  /** Webhook endpoints (cloud, Pro): changes POSTed to a URL, signed. */
  readonly webhooks: WebhooksClient;

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options);
    this.signed = new SignedUrls(this.transport);
    this.keys = new KeysClient(this.transport);
    this.webhooks = new WebhooksClient(this.transport);
  }

  health(): Promise<{ ok: true; version: string }> {
    return this.transport.request("GET", "/health");
  }

  private auditPage(path: string, filter: AuditFilter & PageOptions): Promise<Page<AuditEntry>> {
    return this.transport.request("GET", path, { query: { ...filter } });
  }

  readonly groups = {
    create: (name: string): Promise<GroupInfo> => this.transport.request("POST", "/v1/groups", { body: { name } }),
    list: (page: PageOptions = {}): Promise<Page<Manifest>> =>
      this.transport.request("GET", "/v1/groups", { query: { ...page } }),
    iterate: (options: { limit?: number } = {}): AsyncGenerator<Manifest> =>
      everyItem((cursor) => this.groups.list({ ...options, cursor })),
    get: (group: string): Promise<GroupInfo> => this.transport.request("GET", `/v1/groups/${seg(group)}`),
    /** A group with primitives needs `force` (which deletes them too). */
    delete: async (group: string, options: { force?: boolean } = {}): Promise<void> => {
      await this.transport.request("DELETE", `/v1/groups/${seg(group)}`, { query: { force: options.force } });
    },
    audit: (group: string, filter: AuditFilter & PageOptions = {}): Promise<Page<AuditEntry>> =>
      this.auditPage(`/v1/groups/${seg(group)}/audit`, filter),
    iterateAudit: (group: string, filter: AuditFilter & { limit?: number } = {}): AsyncGenerator<AuditEntry> =>
      everyItem((cursor) => this.groups.audit(group, { ...filter, cursor })),
  };

  /** The workspace's audit trail across groups, newest first. */
  readonly audit = {
    list: (filter: AuditFilter & PageOptions = {}): Promise<Page<AuditEntry>> => this.auditPage("/v1/audit", filter),
    iterate: (filter: AuditFilter & { limit?: number } = {}): AsyncGenerator<AuditEntry> =>
      everyItem((cursor) => this.audit.list({ ...filter, cursor })),
  };

  readonly primitives = {
    create: (input: { name: string; type: PrimitiveType; group: string }): Promise<PrimitiveInfo> =>
      this.transport.request("POST", "/v1/primitives", { body: input }),
    list: (filter: { type?: PrimitiveType; group?: string } & PageOptions = {}): Promise<Page<PrimitiveInfo>> =>
      this.transport.request("GET", "/v1/primitives", { query: { ...filter } }),
    iterate: (filter: { type?: PrimitiveType; group?: string; limit?: number } = {}): AsyncGenerator<PrimitiveInfo> =>
      everyItem((cursor) => this.primitives.list({ ...filter, cursor })),
    get: (id: string): Promise<PrimitiveInfo> => this.transport.request("GET", `/v1/primitives/${seg(id)}`),
    /** Renames or moves a primitive (its id stays). */
    update: (id: string, patch: { name?: string; group?: string }): Promise<PrimitiveInfo> =>
      this.transport.request("PATCH", `/v1/primitives/${seg(id)}`, { body: patch }),
    delete: async (id: string): Promise<void> => {
      await this.transport.request("DELETE", `/v1/primitives/${seg(id)}`);
    },
    stats: (id: string): Promise<PrimitiveStats> => this.transport.request("GET", `/v1/primitives/${seg(id)}/stats`),
    snapshot: (id: string, options: { name?: string } = {}): Promise<SnapshotInfo> =>
      this.transport.request("POST", `/v1/primitives/${seg(id)}/snapshots`, { body: { name: options.name } }),
    snapshots: (id: string, page: PageOptions = {}): Promise<Page<SnapshotInfo>> =>
      this.transport.request("GET", `/v1/primitives/${seg(id)}/snapshots`, { query: { ...page } }),
    iterateSnapshots: (id: string, options: { limit?: number } = {}): AsyncGenerator<SnapshotInfo> =>
      everyItem((cursor) => this.primitives.snapshots(id, { ...options, cursor })),
    /** Replaces the primitive's data with a snapshot's (label or id). */
    restore: (id: string, snapshot: string): Promise<SnapshotInfo> =>
      this.transport.request("POST", `/v1/primitives/${seg(id)}/restore`, { body: { snapshot } }),
    /** A copy with a new id. */
    fork: (id: string, options: ForkOptions = {}): Promise<PrimitiveInfo> =>
      this.transport.request("POST", `/v1/primitives/${seg(id)}/fork`, { body: options }),
    pause: (id: string): Promise<PrimitiveInfo> =>
      this.transport.request("POST", `/v1/primitives/${seg(id)}/pause`, { body: {} }),
    resume: (id: string): Promise<PrimitiveInfo> =>
      this.transport.request("POST", `/v1/primitives/${seg(id)}/resume`, { body: {} }),
    /** A SQLite file of a db, kv or storage primitive: the raw response, whose body streams it. */
    export: (id: string, options: { signal?: AbortSignal } = {}): Promise<Response> =>
      this.transport.send("GET", `/v1/primitives/${seg(id)}/export`, { signal: options.signal }),
    audit: (id: string, filter: AuditFilter & PageOptions = {}): Promise<Page<AuditEntry>> =>
      this.auditPage(`/v1/primitives/${seg(id)}/audit`, filter),
    iterateAudit: (id: string, filter: AuditFilter & { limit?: number } = {}): AsyncGenerator<AuditEntry> =>
      everyItem((cursor) => this.primitives.audit(id, { ...filter, cursor })),
  };

  /**
   * A change feed as an async iterator: `for await (const change of prim.changes({ group: "app" }))`
   * (or `{ primitive: id }`), long-polling for more; resume with `after` set to the last handled
   * entry's `cursor`. See `readChanges` for one page.
   */
  changes(target: ChangeTarget, options: ChangeReadOptions = {}): AsyncGenerator<ChangeEntry> {
    return iterateChanges(this.transport, target, options);
  }

  /** One page of a change feed (`wait` makes it a long poll). */
  readChanges(target: ChangeTarget, options: ChangeReadOptions = {}): Promise<ChangePage> {
    return readChanges(this.transport, target, options);
  }

  /** The routes of a `db` primitive. */
  db(id: string): DbClient {
    return new DbClient(this.transport, id);
  }

  /** The routes of an `fs` primitive. */
  fs(id: string): FsClient {
    return new FsClient(this.transport, id);
  }

  /** The routes of a `queue` primitive. */
  queue(id: string): QueueClient {
    return new QueueClient(this.transport, id);
  }

  /** The routes of a `memory` primitive. */
  memory(id: string): MemoryClient {
    return new MemoryClient(this.transport, id);
  }

  /** The routes of a `vault` primitive. */
  vault(id: string): VaultClient {
    return new VaultClient(this.transport, id);
  }

  /** The routes of a `kv` primitive. */
  kv(id: string): KvClient {
    return new KvClient(this.transport, id);
  }

  /** The routes of a `storage` primitive. */
  storage(id: string): StorageClient {
    return new StorageClient(this.transport, id);
  }
}
