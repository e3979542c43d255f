import type {
  BatchResults,
  BranchInfo,
  ChangePage,
  ConsolidateResult,
  FetchResult,
  FileDownload,
  FsForkResult,
  Grant,
  GroupArchive,
  ImportResult,
  ImportStatus,
  Job,
  MemoryRecord,
  MemoryVersion,
  ObjectPage,
  PresignResult,
  QueryResult,
  QueueCounts,
  RecalledMemory,
  SearchHit,
  SecretInfo,
  SecretListing,
  SecretRequest,
  SentJob,
  SnapshotInfo,
  Subscription,
  TableDetail,
  TableSummary,
  WhoAmI,
} from "./data-shapes.js";
import type { OperationName } from "./operations.js";
import type {
  AuditEntry,
  FsEntry,
  FsRead,
  GroupInfo,
  KvEntry,
  Manifest,
  ObjectInfo,
  ObjectRead,
  Page,
  PrimitiveInfo,
  PrimitiveStats,
  ResolvedPrimitive,
} from "./types.js";

/**
 * What every operation answers, by name. The engine's operation definers require each
 * handler's result to be assignable to its entry here, so a changed answer breaks the engine's
 * build until this map (and with it the SDK's types and the REST response schemas) says so.
 * Transports reshape a few answers (REST streams reads and downloads; subscribe's `created`
 * becomes the status code); the REST response schemas describe what goes on the wire.
 */
export interface OperationResults {
  "group.create": GroupInfo;
  "group.list": Page<Manifest>;
  "group.get": GroupInfo;
  "group.delete": void;
  "group.find": Manifest | null;
  "primitive.resolve": ResolvedPrimitive;
  "primitive.create": PrimitiveInfo;
  "primitive.list": Page<PrimitiveInfo>;
  "primitive.get": PrimitiveInfo;
  "primitive.update": PrimitiveInfo;
  "primitive.delete": void;
  "primitive.stats": PrimitiveStats;
  "primitive.export": FileDownload;
  "primitive.snapshot": SnapshotInfo;
  "primitive.snapshots": Page<SnapshotInfo>;
  "primitive.restore": SnapshotInfo;
  "primitive.fork": PrimitiveInfo;
  "primitive.pause": PrimitiveInfo;
  "primitive.resume": PrimitiveInfo;
  "group.export": GroupArchive;
  "group.import": ImportResult;
  "group.import_status": ImportStatus;
  "auth.whoami": WhoAmI;
  "audit.list": Page<AuditEntry>;
  "audit.group": Page<AuditEntry>;
  "audit.primitive": Page<AuditEntry>;
  "changes.read": ChangePage;
  "changes.group": ChangePage;
  "kv.list": Page<KvEntry>;
  "kv.get": KvEntry;
  "kv.set": KvEntry;
  "kv.delete": { deleted: boolean };
  "kv.mget": { data: (KvEntry | null)[]; truncated: boolean };
  "kv.mset": { data: KvEntry[] };
  "kv.mdelete": { deleted: number };
  "kv.incr": KvEntry;
  "db.query": QueryResult;
  "db.exec": QueryResult;
  "db.batch": { results: QueryResult[] };
  "db.tables": { data: TableSummary[] };
  "db.table": TableDetail;
  "db.branch.create": BranchInfo;
  "db.branch.list": { data: BranchInfo[] };
  "db.branch.promote": { promoted: string };
  "db.branch.delete": { deleted: string };
  "storage.list": ObjectPage;
  "storage.read": ObjectRead;
  "storage.put": ObjectInfo;
  "storage.delete": void;
  "storage.copy": ObjectInfo;
  "storage.presign": PresignResult;
  "storage.revoke": { epoch: number };
  "storage.signed": ObjectRead | ObjectInfo;
  "fs.read": FsRead;
  "fs.write": FsEntry;
  "fs.delete": void;
  "fs.mkdir": FsEntry;
  "fs.move": FsEntry;
  "fs.glob": { data: string[] };
  "fs.search": { data: SearchHit[] };
  "fs.fork": FsForkResult;
  "queue.send": SentJob;
  "queue.receive": { data: Job[] };
  "queue.ack": Job;
  "queue.heartbeat": Job;
  "queue.requeue": Job;
  "queue.purge": { purged: number };
  "queue.queues": { data: QueueCounts[] };
  "queue.messages": Page<Job>;
  "queue.get": Job;
  "queue.subscribe": Subscription & { created: boolean };
  "queue.unsubscribe": void;
  "queue.publish": { delivered: number };
  "queue.send_batch": BatchResults<Omit<SentJob, "body">>;
  "queue.ack_batch": BatchResults<Omit<Job, "body">>;
  "queue.publish_batch": BatchResults<{ delivered: number }>;
  "memory.remember": MemoryRecord;
  "memory.list": Page<MemoryRecord>;
  "memory.get": MemoryRecord;
  "memory.forget": { id: string; deleted: true };
  "memory.supersede": MemoryRecord;
  "memory.recall": { data: RecalledMemory[] };
  "memory.consolidate": ConsolidateResult;
  "memory.history": Page<MemoryVersion>;
  "vault.put": SecretInfo;
  "vault.delete": void;
  "vault.list": Page<SecretListing>;
  "vault.grant": Grant;
  "vault.grants": Page<Grant>;
  "vault.revoke": void;
  "vault.fetch": FetchResult;
  "vault.request": SecretRequest;
  "vault.request_get": SecretRequest;
  "vault.request_fulfil": SecretRequest;
  "vault.request_decline": SecretRequest;
  "vault.requests": { data: SecretRequest[] };
}

/** What operation `N` answers. */
export type OperationResult<N extends OperationName> = OperationResults[N];

// Every operation has an entry, and nothing else does: a name added to OPERATION_NAMES without
// its answer here fails this package's build.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const complete: Exact<keyof OperationResults, OperationName> = true;
void complete;
