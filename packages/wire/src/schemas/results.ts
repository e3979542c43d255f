import { z } from "zod";
import type { OperationName, OperationResult } from "../index.js";
import * as S from "./shapes.js";

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * The JSON answer of every operation that answers JSON as it is (the rest answer no body,
 * bytes, or a reshaped answer their routes describe: see routes.ts). Each entry is checked
 * against `OperationResult` of its name when this package compiles.
 */
const RESULTS = {
  "group.create": S.groupInfo,
  "group.list": S.page(S.manifest),
  "group.get": S.groupInfo,
  "primitive.create": S.primitiveInfo,
  "primitive.list": S.page(S.primitiveInfo),
  "primitive.get": S.primitiveInfo,
  "primitive.update": S.primitiveInfo,
  "primitive.stats": S.primitiveStats,
  "primitive.snapshot": S.snapshotInfo,
  "primitive.snapshots": S.page(S.snapshotInfo),
  "primitive.restore": S.snapshotInfo,
  "primitive.fork": S.primitiveInfo,
  "primitive.pause": S.primitiveInfo,
  "primitive.resume": S.primitiveInfo,
  "auth.whoami": S.whoAmI,
  "group.import": S.importResult,
  "group.import_status": S.importStatus,
  "audit.list": S.page(S.auditEntry),
  "audit.group": S.page(S.auditEntry),
  "audit.primitive": S.page(S.auditEntry),
  "changes.read": S.changePage,
  "changes.group": S.changePage,
  "kv.list": S.page(S.kvEntry),
  "kv.get": S.kvEntry,
  "kv.set": S.kvEntry,
  "kv.delete": z.object({ deleted: z.boolean() }),
  "kv.mget": z.object({ data: z.array(S.kvEntry.nullable()), truncated: z.boolean() }),
  "kv.mset": z.object({ data: z.array(S.kvEntry) }),
  "kv.mdelete": z.object({ deleted: z.number().int() }),
  "kv.incr": S.kvEntry,
  "db.query": S.queryResult,
  "db.exec": S.queryResult,
  "db.batch": z.object({ results: z.array(S.queryResult) }),
  "db.tables": z.object({ data: z.array(S.tableSummary) }),
  "db.table": S.tableDetail,
  "db.branch.create": S.branchInfo,
  "db.branch.list": z.object({ data: z.array(S.branchInfo) }),
  "db.branch.promote": z.object({ promoted: z.string() }),
  "db.branch.delete": z.object({ deleted: z.string() }),
  "storage.list": S.objectPage,
  "storage.put": S.objectInfo,
  "storage.copy": S.objectInfo,
  "storage.presign": S.presignResult,
  "storage.revoke": z.object({ epoch: z.number().int() }),
  "fs.write": S.fsEntry,
  "fs.mkdir": S.fsEntry,
  "fs.move": S.fsEntry,
  "fs.glob": z.object({ data: z.array(z.string()) }),
  "fs.search": z.object({ data: z.array(S.searchHit) }),
  "fs.fork": S.fsForkResult,
  "queue.send": S.sentJob,
  "queue.receive": z.object({ data: z.array(S.job) }),
  "queue.ack": S.job,
  "queue.heartbeat": S.job,
  "queue.requeue": S.job,
  "queue.purge": z.object({ purged: z.number().int() }),
  "queue.queues": z.object({ data: z.array(S.queueCounts) }),
  "queue.messages": S.page(S.job),
  "queue.get": S.job,
  "queue.publish": z.object({ delivered: z.number().int() }),
  "queue.send_batch": S.batch(S.batchSentJob),
  "queue.ack_batch": S.batch(S.batchJob),
  "queue.publish_batch": S.batch(z.object({ delivered: z.number().int() })),
  "memory.remember": S.memoryRecord,
  "memory.list": S.page(S.memoryRecord),
  "memory.get": S.memoryRecord,
  "memory.forget": z.object({ id: z.string(), deleted: z.literal(true) }),
  "memory.supersede": S.memoryRecord,
  "memory.recall": z.object({ data: z.array(S.recalledMemory) }),
  "memory.consolidate": S.consolidateResult,
  "memory.history": S.page(S.memoryVersion),
  "vault.put": S.secretInfo,
  "vault.list": S.page(S.secretListing),
  "vault.grant": S.grant,
  "vault.grants": S.page(S.grant),
  "vault.fetch": S.fetchResult,
} satisfies { [N in OperationName]?: z.ZodType };

type Checked = { [N in keyof typeof RESULTS]: Exact<z.output<(typeof RESULTS)[N]>, OperationResult<N>> };
const checked: { [N in keyof typeof RESULTS]: true } = {} as Checked;
void checked;

/** The JSON schema of what operation `name` answers, when it answers JSON as is. */
export function resultSchema(name: OperationName): z.ZodType | undefined {
  return (RESULTS as Partial<Record<OperationName, z.ZodType>>)[name];
}
