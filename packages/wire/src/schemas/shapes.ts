import { z } from "zod";
import type * as W from "../index.js";
import { DURABILITIES, ERROR_STATUS, PRIMITIVE_TYPES } from "../index.js";
import { same } from "./same.js";

/**
 * The wire shapes as zod schemas, for the OpenAPI document's response bodies. Each is checked
 * against its `@prim/wire` type both ways when this package compiles (`same.ts`), so the
 * document, the SDK's types and the engine's answers cannot drift apart silently; the SDK's
 * suite validates every answer it gets against the published document at run time.
 */

const ms = z.number().int().describe("ms since the Unix epoch");
const primitiveType = z.enum(PRIMITIVE_TYPES);

export const manifest = same<W.Manifest>()(
  z.object({ id: z.string(), namespace: z.string(), name: z.string(), created_at: ms }).meta({ id: "Manifest" }),
);

const forkedFrom = same<W.ForkedFrom>()(
  z.object({
    id: z.string().nullable(),
    name: z.string(),
    type: primitiveType,
    group: z.string(),
    snapshot: z.string().nullable(),
  }),
);

const durability = z.enum(DURABILITIES).meta({
  description:
    "When writes are acknowledged: `fast` once committed (survives the process dying; a power cut can lose the last ones), `durable` once fsynced to stable storage. The primitive's own setting (PATCH) or the engine's.",
});

export const primitiveInfo = same<W.PrimitiveInfo>()(
  z
    .object({
      id: z.string(),
      name: z.string(),
      type: primitiveType,
      group: z.string(),
      created_at: ms,
      paused: z.boolean(),
      size_bytes: z.number(),
      forked_from: forkedFrom.nullable(),
      durability,
    })
    .meta({ id: "PrimitiveInfo" }),
);

export const groupInfo = same<W.GroupInfo>()(
  z.object({ ...manifest.shape, primitives: z.array(primitiveInfo) }).meta({ id: "GroupInfo" }),
);

export const primitiveStats = same<W.PrimitiveStats>()(
  z
    .object({
      id: z.string(),
      name: z.string(),
      type: primitiveType,
      size_bytes: z.number(),
      items: z.number().int(),
      paused: z.boolean(),
      durability,
    })
    .meta({ id: "PrimitiveStats" }),
);

export const snapshotInfo = same<W.SnapshotInfo>()(
  z
    .object({ id: z.string(), name: z.string().nullable(), created_at: ms, primitive: z.string() })
    .meta({ id: "SnapshotInfo" }),
);

export const auditEntry = same<W.AuditEntry>()(
  z
    .object({
      id: z.string(),
      ts: ms,
      group: z.string(),
      primitive: z.union([primitiveType, z.literal("group"), z.literal("workspace")]),
      primitive_id: z.string().nullable(),
      instance: z.string().nullable(),
      actor: z.string(),
      action: z.string(),
      target: z.string().nullable(),
      detail: z.record(z.string(), z.unknown()).nullable(),
    })
    .meta({ id: "AuditEntry" }),
);

export const kvEntry = same<W.KvEntry>()(
  z
    .object({
      key: z.string(),
      value: z.unknown().optional().describe("Omitted from listings unless values=true; base64 for bytes"),
      encoding: z.enum(["json", "bytes"]),
      version: z.number().int(),
      expires_at: ms.nullable(),
      created_at: ms,
      updated_at: ms,
    })
    .meta({ id: "KvEntry" }),
);

export const objectInfo = same<W.ObjectInfo>()(
  z
    .object({
      key: z.string(),
      size: z.number().int(),
      etag: z.string(),
      content_type: z.string(),
      metadata: z.record(z.string(), z.string()),
      created_at: ms,
      updated_at: ms,
    })
    .meta({ id: "ObjectInfo" }),
);

export const objectPage = same<W.ObjectPage>()(
  z.object({ data: z.array(objectInfo), prefixes: z.array(z.string()), next_cursor: z.string().nullable() }),
);

export const presignResult = same<W.PresignResult>()(
  z.object({
    url: z.string(),
    method: z.enum(["GET", "PUT"]),
    headers: z.record(z.string(), z.string()),
    expires_at: ms,
    max_uses: z
      .number()
      .int()
      .optional()
      .describe("Present when signed with `max_uses`: the successful requests the URL allows"),
  }),
);

export const queryResult = same<W.QueryResult>()(
  z
    .object({
      columns: z.array(z.string()),
      rows: z.array(z.record(z.string(), z.unknown())),
      rows_affected: z.number().int(),
      last_insert_rowid: z.union([z.number(), z.string()]).nullable().describe("a string past 2^53"),
      truncated: z.boolean(),
    })
    .meta({ id: "QueryResult" }),
);

export const tableSummary = same<W.TableSummary>()(z.object({ name: z.string(), type: z.enum(["table", "view"]) }));

export const tableDetail = same<W.TableDetail>()(
  z.object({
    ...tableSummary.shape,
    sql: z.string(),
    columns: z.array(
      z.object({
        name: z.string(),
        type: z.string(),
        notnull: z.boolean(),
        default: z.string().nullable(),
        pk: z.number().int(),
      }),
    ),
  }),
);

export const branchInfo = same<W.BranchInfo>()(
  z.object({ name: z.string(), created_at: ms, main_changed: z.boolean() }).meta({ id: "BranchInfo" }),
);

export const fsEntry = same<W.FsEntry>()(
  z
    .object({
      path: z.string(),
      name: z.string(),
      type: z.enum(["file", "dir"]),
      size: z.number().int(),
      mode: z.string().describe("octal permissions, e.g. 644"),
      mtime: ms,
      etag: z.string().nullable(),
    })
    .meta({ id: "FsEntry" }),
);

export const fsListing = z.object({ data: z.array(fsEntry), truncated: z.boolean() });

export const searchHit = same<W.SearchHit>()(z.object({ path: z.string(), snippet: z.string() }));

export const fsForkResult = same<W.FsForkResult>()(z.object({ path: z.string(), files: z.number().int() }));

export const job = same<W.Job>()(
  z
    .object({
      id: z.string(),
      queue: z.string(),
      body: z.unknown(),
      status: z.enum(["ready", "leased", "done", "dead"]),
      priority: z.number().int(),
      attempts: z.number().int(),
      max_attempts: z.number().int(),
      available_at: ms,
      lease_expires_at: ms.nullable(),
      last_error: z.string().nullable(),
      dedupe_key: z.string().nullable(),
      created_at: ms,
      updated_at: ms,
      lease_token: z.string().optional().describe("only on received jobs"),
    })
    .meta({ id: "Job" }),
);

export const sentJob = same<W.SentJob>()(z.object({ ...job.shape, deduplicated: z.boolean() }));

/** The spec's error body: `{ error: { code, message } }` (also an MCP tool's error result). */
export const errorBody = same<W.ErrorBody>()(
  z.object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [W.ErrorCode, ...W.ErrorCode[]]),
      message: z.string(),
    }),
  }),
);

/** A batch entry that failed on its own: the single route's error, and its status. */
export const batchEntryError = same<W.BatchEntryError>()(z.object({ ...errorBody.shape, status: z.number().int() }));

/** `{ data }`: one entry per item sent, in order: its result or its error. */
export const batch = <T extends z.ZodType>(item: T) => z.object({ data: z.array(z.union([item, batchEntryError])) });

const { body: _body, ...jobFields } = job.shape;
/** A job in a batch's answer: every field but `body`. */
export const batchJob = same<Omit<W.Job, "body">>()(z.object(jobFields));
export const batchSentJob = same<Omit<W.SentJob, "body">>()(z.object({ ...jobFields, deduplicated: z.boolean() }));

export const queueCounts = same<W.QueueCounts>()(
  z.object({
    name: z.string(),
    ready: z.number().int(),
    delayed: z.number().int(),
    leased: z.number().int(),
    done: z.number().int(),
    dead: z.number().int(),
  }),
);

export const subscription = same<W.Subscription>()(z.object({ topic: z.string(), queue: z.string(), created_at: ms }));

export const memoryRecord = same<W.MemoryRecord>()(
  z
    .object({
      id: z.string(),
      kind: z.string(),
      text: z.string(),
      tags: z.array(z.string()),
      owner: z.string().nullable(),
      metadata: z.record(z.string(), z.unknown()),
      created_at: ms,
      updated_at: ms,
      superseded_by: z.string().nullable(),
      supersedes: z.array(z.string()),
      version: z.number().int(),
    })
    .meta({ id: "Memory" }),
);

export const memoryVersion = same<W.MemoryVersion>()(
  z
    .object({
      ...memoryRecord.shape,
      op: z.enum(["create", "update", "supersede", "forget"]),
      at: ms,
    })
    .meta({ id: "MemoryVersion" }),
);

export const recalledMemory = same<W.RecalledMemory>()(z.object({ ...memoryRecord.shape, score: z.number() }));

export const consolidateResult = same<W.ConsolidateResult>()(
  z.object({ merged: z.number().int(), superseded: z.array(z.string()) }),
);

const grantSummary = same<W.GrantSummary>()(
  z.object({ hosts: z.array(z.string()), methods: z.array(z.string()).nullable(), expires_at: ms.nullable() }),
);

export const grant = same<W.Grant>()(
  z.object({ ...grantSummary.shape, name: z.string(), created_at: ms }).meta({ id: "Grant" }),
);

export const secretInfo = same<W.SecretInfo>()(
  z.object({ name: z.string(), version: z.number().int(), created_at: ms, updated_at: ms }),
);

export const secretListing = same<W.SecretListing>()(
  z.object({
    ...secretInfo.shape,
    grant: grantSummary.nullable(),
    needs_value: z
      .boolean()
      .describe("true: imported from a group archive without vault values; using it is 409 until a value is put"),
  }),
);

export const fetchResult = same<W.FetchResult>()(
  z.object({
    status: z.number().int(),
    headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
    body: z.string(),
    encoding: z.enum(["utf8", "base64"]),
  }),
);

/** `{ data, next_cursor }` of `item`. */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() });

export const whoAmI = same<W.WhoAmI>()(
  z
    .object({
      workspace: z.string(),
      workspace_name: z.string().nullable(),
      actor: z.string(),
      kind: z.enum(["workspace", "scoped", "local"]),
      group: z.object({ id: z.string(), name: z.string() }).nullable(),
      tools: z.array(z.string()).nullable(),
      read_only: z
        .boolean()
        .meta({ description: "Every call that writes is refused (403 forbidden), whatever the tools" }),
    })
    .meta({ id: "WhoAmI" }),
);

export const importStatus = same<W.ImportStatus>()(
  z
    .object({
      recipient: z.string().describe("this engine's X25519 transfer key, base64url"),
      upload: z.object({ sha256: z.string(), received: z.number().int() }).nullable(),
    })
    .meta({ id: "ImportStatus" }),
);

export const importResult = same<W.ImportResult>()(
  z
    .object({
      group: groupInfo,
      imported: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          type: primitiveType,
          source_id: z.string(),
          replaced: z.object({ snapshot: z.string() }).nullable(),
        }),
      ),
      sha256: z.string(),
      bytes: z.number().int(),
    })
    .meta({ id: "ImportResult" }),
);

export const changeEntry = same<W.ChangeEntry>()(
  z
    .object({
      primitive: z.string(),
      type: primitiveType,
      epoch: z.number().int().describe("A new one starts when the primitive's data is replaced (restore)"),
      seq: z.number().int(),
      ts: ms,
      op: z.string(),
      key: z.string().optional(),
      path: z.string().optional(),
      id: z.string().optional(),
      name: z.string().optional(),
      queue: z.string().optional(),
      table: z.string().optional(),
      version: z.number().int().optional(),
      size: z.number().int().optional(),
      detail: z.record(z.string(), z.unknown()).optional(),
      cursor: z.string(),
    })
    .meta({ id: "ChangeEntry" }),
);

export const changePage = same<W.ChangePage>()(
  z.object({ data: z.array(changeEntry), cursor: z.string() }).meta({ id: "ChangePage" }),
);
