import { toolInfo } from "@prim/wire";
import { z } from "zod";
import { primitiveArg } from "./common.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("db");
const params = z
  .union([z.array(z.unknown()), z.record(z.string(), z.unknown())])
  .optional()
  .describe("Bound parameters: an array for `?` placeholders, or an object for `:name` placeholders.");
const branch = z.string().optional().describe("Run on this branch instead of main.");
/** The engine checks each entry (db/outbox.ts); a bad one refuses the call before anything runs. */
const enqueue = z
  .array(
    z.strictObject({
      primitive: z.string().describe("The queue primitive (name or id) in this group."),
      queue: z.string().describe("The queue inside it."),
      body: z.unknown().describe("The job's payload: any JSON value (at most 256 KiB)."),
      delay: z.union([z.string(), z.number().int()]).optional(),
      priority: z.number().int().optional(),
      max_attempts: z.number().int().optional(),
      dedupe_key: z.string().optional(),
    }),
  )
  .optional()
  .describe(
    "Jobs to send into queues of this group if and only if the write commits (1 to 100; exactly once, after the commit; main only). Needs queue_send too.",
  );

export const DB_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("db_query"),
    shape: {
      primitive: p,
      action: z.enum(["query", "tables", "table"]).optional().describe('Default "query".'),
      sql: z.string().optional().describe("One SQL statement."),
      params,
      table: z.string().optional().describe('Table name (action "table").'),
      branch,
    },
    actions: {
      query: { op: "db.query", fields: ["sql", "params", "branch"] },
      tables: { op: "db.tables", fields: ["branch"] },
      table: { op: "db.table", fields: ["table", "branch"] },
    },
  },
  {
    ...toolInfo("db_exec"),
    shape: {
      primitive: p,
      sql: z.string().optional().describe("One SQL statement."),
      params,
      statements: z
        .array(z.strictObject({ sql: z.string(), params: params }))
        .optional()
        .describe("Several statements run as one transaction (instead of `sql`)."),
      branch,
      enqueue,
    },
    pick: (a) => (a.statements !== undefined ? "batch" : "exec"),
    // Enqueueing is also a queue send: the call is narrowed to both tools.
    alsoNeeds: (a) => (a.enqueue !== undefined ? ["queue_send"] : []),
    actions: {
      exec: { op: "db.exec", fields: ["sql", "params", "branch", "enqueue"] },
      batch: { op: "db.batch", fields: ["statements", "branch", "enqueue"] },
    },
  },
  {
    ...toolInfo("db_branch"),
    shape: {
      primitive: p,
      action: z.enum(["create", "list", "promote", "delete"]),
      name: z.string().optional().describe("Branch name."),
      force: z.boolean().optional().describe("promote even if main changed since the branch was made."),
    },
    actions: {
      create: { op: "db.branch.create", fields: ["name"] },
      list: { op: "db.branch.list" },
      promote: { op: "db.branch.promote", fields: ["force"], input: (a) => ({ branch: a.name }) },
      delete: { op: "db.branch.delete", input: (a) => ({ branch: a.name }) },
    },
  },
];
