import { toolAllowed } from "@prim/wire";
import { z } from "zod";
import { nameSchema } from "../../core/names.js";
import { queryBoolean } from "../../core/pagination.js";
import type { BranchInfo, QueryResult } from "../../sql-host/protocol.js";
import { checkStatementAllowed, sqlMayWrite } from "../../sql-host/sql-safety.js";
import { type AnyOperation, dataOp, type OpContext } from "../operation.js";
import { enqueueCount, enqueueSchema, runWithOutbox } from "./outbox.js";
import type { DbStore, TableDetail, TableSummary } from "./store.js";

const dbOp = dataOp<DbStore>("db");

/** Most statements in one batch. */
export const MAX_BATCH_STATEMENTS = 100;
/** Longest SQL text of one statement. */
export const MAX_SQL_CHARS = 100_000;

const sqlSchema = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_SQL_CHARS, `must be at most ${MAX_SQL_CHARS} characters`);
const paramsSchema = z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())]).optional();
const branchSchema = nameSchema.optional();

/**
 * Any db tool reaches query and batch; writing needs `db_exec` and a credential that is not
 * read-only (SQLite decides what writes: a statement that is not `readonly` is refused).
 */
const DB_TOOLS = ["db_query", "db_exec"];
const readOnly = (ctx: OpContext) => ctx.principal.readOnly === true || !toolAllowed(ctx.principal, "db_exec");

/**
 * db.exec and db.batch write unless every statement is one that never writes (`sqlMayWrite`):
 * `/exec` is the spec's alias of `/query`, so a read-only credential may still SELECT through it,
 * while a batch holding one writing statement is refused before any of it runs.
 */
const statementsAccess = (input: unknown): "read" | "write" => {
  if (enqueueCount(input) > 0) return "write"; // sends into a queue (outbox.ts)
  const i = input as { sql?: unknown; statements?: unknown } | null;
  const sqls = Array.isArray(i?.statements) ? i.statements.map((s) => (s as { sql?: unknown } | null)?.sql) : [i?.sql];
  return sqls.every((sql) => typeof sql === "string" && !sqlMayWrite(sql)) ? "read" : "write";
};

/** One operation for the call, and one per message it enqueues (a queue send each). */
const enqueueUnits = (input: unknown): number => 1 + enqueueCount(input);

function checkAll(statements: { sql: string }[], prefix: (i: number) => string): void {
  statements.forEach((s, i) => {
    checkStatementAllowed(s.sql, prefix(i));
  });
}

export const dbQuery = dbOp({
  name: "db.query",
  // A statement here writes only with the `db_exec` grant (a write tool); db.exec is the write door.
  access: "read",
  // A credential with `db_exec` writes through /query too, so a writing statement is refused at
  // Starter's storage cap like /exec; reads keep working there.
  writesStorage: (input) => {
    const sql = (input as { sql?: unknown } | null)?.sql;
    // no SQL: validation refuses it later
    return (typeof sql === "string" && sqlMayWrite(sql)) || enqueueCount(input) > 0;
  },
  // The statement, and one queue operation per message it enqueues (spec: queue sends count).
  units: enqueueUnits,
  tool: DB_TOOLS,
  input: z.strictObject({ sql: sqlSchema, params: paramsSchema, branch: branchSchema, enqueue: enqueueSchema }),
  run(ctx, input): Promise<QueryResult> {
    checkStatementAllowed(input.sql, "sql");
    ctx.audit.target = input.branch ?? null;
    const statement = { sql: input.sql, params: input.params };
    const options = { branch: input.branch, readOnly: readOnly(ctx) };
    if (input.enqueue === undefined) return ctx.store.query(statement, options);
    return runWithOutbox(ctx, input, options.readOnly, (outbox) => ctx.store.query(statement, { ...options, outbox }));
  },
});

/**
 * The exec door (REST `/exec`, the spec's alias of `/query`, and the MCP `db_exec` tool's
 * single statement): the same runner as `db.query` under its own name, so the audit log says
 * which door a statement came through. The name grants nothing: whether a statement may write
 * is always the credential's `db_exec` grant (`readOnly` above), so `/exec` with a read-only
 * key stays read-only, as the spec's alias must.
 */
export const dbExec = dbOp({
  ...dbQuery,
  name: "db.exec",
  access: statementsAccess,
  destructive: true,
  idempotent: false,
  writesStorage: true,
});

export const dbBatch = dbOp({
  name: "db.batch",
  access: statementsAccess,
  destructive: true,
  idempotent: false,
  writesStorage: true,
  units: enqueueUnits,
  tool: DB_TOOLS,
  input: z.strictObject({
    statements: z
      .array(z.strictObject({ sql: sqlSchema, params: paramsSchema }))
      .min(1, "at least one statement")
      .max(MAX_BATCH_STATEMENTS, `at most ${MAX_BATCH_STATEMENTS} statements per batch`),
    branch: branchSchema,
    enqueue: enqueueSchema,
  }),
  run(ctx, input): Promise<{ results: QueryResult[] }> {
    checkAll(input.statements, (i) => `statements[${i}]`);
    ctx.audit.target = input.branch ?? null;
    ctx.audit.detail = { statements: input.statements.length };
    const options = { branch: input.branch, readOnly: readOnly(ctx) };
    if (input.enqueue === undefined) return ctx.store.batch(input.statements, options);
    return runWithOutbox(ctx, input, options.readOnly, (outbox) =>
      ctx.store.batch(input.statements, { ...options, outbox }),
    );
  },
});

export const dbTables = dbOp({
  name: "db.tables",
  access: "read",
  writesStorage: false,
  tool: DB_TOOLS,
  input: z.strictObject({ branch: branchSchema }),
  async run(ctx, input): Promise<{ data: TableSummary[] }> {
    return { data: await ctx.store.tables(input.branch) };
  },
});

export const dbTable = dbOp({
  name: "db.table",
  access: "read",
  writesStorage: false,
  tool: DB_TOOLS,
  input: z.strictObject({ table: z.string().min(1), branch: branchSchema }),
  run(ctx, input): Promise<TableDetail> {
    ctx.audit.target = input.table;
    return ctx.store.table(input.table, input.branch);
  },
});

export const dbBranchCreate = dbOp({
  name: "db.branch.create",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "db_branch",
  input: z.strictObject({ name: nameSchema }),
  run(ctx, input): Promise<BranchInfo> {
    ctx.audit.target = input.name;
    return ctx.store.createBranch(input.name, ctx.services.clock.now());
  },
});

export const dbBranchList = dbOp({
  name: "db.branch.list",
  access: "read",
  writesStorage: false,
  tool: "db_branch",
  input: z.strictObject({}),
  async run(ctx): Promise<{ data: BranchInfo[] }> {
    return { data: await ctx.store.branches() };
  },
});

export const dbBranchPromote = dbOp({
  name: "db.branch.promote",
  access: "write",
  destructive: true,
  idempotent: false,
  writesStorage: false,
  tool: "db_branch",
  input: z.strictObject({ branch: nameSchema, force: z.union([z.boolean(), queryBoolean]).default(false) }),
  run(ctx, input): Promise<{ promoted: string }> {
    ctx.audit.target = input.branch;
    ctx.audit.detail = { force: input.force };
    return ctx.store.promote(input.branch, input.force);
  },
});

export const dbBranchDelete = dbOp({
  name: "db.branch.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "db_branch",
  input: z.strictObject({ branch: nameSchema }),
  run(ctx, input): Promise<{ deleted: string }> {
    ctx.audit.target = input.branch;
    return ctx.store.deleteBranch(input.branch);
  },
});

export const DB_OPERATIONS: readonly AnyOperation[] = [
  dbQuery,
  dbExec,
  dbBatch,
  dbTables,
  dbTable,
  dbBranchCreate,
  dbBranchList,
  dbBranchPromote,
  dbBranchDelete,
];
