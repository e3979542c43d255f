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
    name: "db_query",
    title: "Query a SQL database (read-only)",
    description:
      'Runs one read-only SQL statement (SQLite dialect) and returns { columns, rows, rows_affected, last_insert_rowid, truncated }. Statements that write are refused (use db_exec). Also "tables" (list tables and views) and "table" (columns and CREATE SQL of `table`). Results are capped at 10,000 rows / 10 MiB; BLOBs come back base64.',
    type: "db",
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
    name: "db_exec",
    title: "Change a SQL database",
    description:
      "Runs one SQL statement that may write (`sql`, `params`), or several in one transaction (`statements`: all succeed or none; the error names the failing index). SQLite dialect; ATTACH, transaction control and engine pragmas are refused. Statements stop after 5 s.",
    type: "db",
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
    name: "db_branch",
    title: "Manage database branches",
    description:
      'Branches are copies of the database to try changes on: "create" (`name`), "list", "promote" (`name`; makes main equal to the branch; refused with branch_conflict if main changed since, unless `force`), "delete" (`name`). Query a branch with the `branch` argument of db_query / db_exec.',
    type: "db",
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
