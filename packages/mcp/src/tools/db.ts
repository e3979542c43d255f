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
    },
    pick: (a) => (a.statements !== undefined ? "batch" : "exec"),
    actions: {
      exec: { op: "db.exec", fields: ["sql", "params", "branch"] },
      batch: { op: "db.batch", fields: ["statements", "branch"] },
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
