import type { BranchInfo, OperationResult, QueryResult, TableDetail, TableSummary } from "@prim/wire";
import { PrimitiveClient, seg } from "./primitive-client.js";

/** Positional (`?`) or named (`:name`, `@name`, `$name`) parameters. */
export type SqlParams = unknown[] | Record<string, unknown>;

export interface Statement {
  sql: string;
  params?: SqlParams;
}

export interface BranchOption {
  /** Run against this branch instead of main. */
  branch?: string;
}

/** A job sent with a write, if and only if it commits (the db outbox; main only). */
export interface EnqueueMessage {
  /** The queue primitive (name or id) in the db's group. */
  primitive: string;
  /** The queue inside it. */
  queue: string;
  body: unknown;
  delay?: string | number;
  dedupe_key?: string;
  priority?: number;
  max_attempts?: number;
}

export interface WriteOptions extends BranchOption {
  /** Jobs sent into queues of the db's group exactly once after the write commits (1 to 100). */
  enqueue?: EnqueueMessage[];
}

/** The db routes of one primitive: SQL on SQLite, with branches. */
export class DbClient extends PrimitiveClient {
  /** Runs one statement; rows past the caps come back with `truncated: true`. */
  query(sql: string, params?: SqlParams, options: WriteOptions = {}): Promise<QueryResult> {
    const { branch, enqueue } = options;
    return this.transport.request("POST", `${this.base}/query`, { body: { sql, params, branch, enqueue } });
  }

  /** The same as `query` (the `/exec` alias, for statements that write). */
  exec(sql: string, params?: SqlParams, options: WriteOptions = {}): Promise<QueryResult> {
    const { branch, enqueue } = options;
    return this.transport.request("POST", `${this.base}/exec`, { body: { sql, params, branch, enqueue } });
  }

  /** Up to 100 statements in one transaction: all of them or none. */
  batch(statements: Statement[], options: WriteOptions = {}): Promise<OperationResult<"db.batch">> {
    const { branch, enqueue } = options;
    return this.transport.request("POST", `${this.base}/batch`, { body: { statements, branch, enqueue } });
  }

  /** Tables and views. */
  async tables(options: BranchOption = {}): Promise<TableSummary[]> {
    const answer = await this.transport.request<{ data: TableSummary[] }>("GET", `${this.base}/tables`, {
      query: { branch: options.branch },
    });
    return answer.data;
  }

  /** A table's columns and SQL. */
  table(name: string, options: BranchOption = {}): Promise<TableDetail> {
    return this.transport.request("GET", `${this.base}/tables/${seg(name)}`, { query: { branch: options.branch } });
  }

  readonly branches = {
    create: (name: string): Promise<BranchInfo> =>
      this.transport.request("POST", `${this.base}/branches`, { body: { name } }),
    list: async (): Promise<BranchInfo[]> =>
      (await this.transport.request<{ data: BranchInfo[] }>("GET", `${this.base}/branches`)).data,
    /** Makes the branch main; 409 `branch_conflict` if main changed since, unless `force`. */
    promote: (name: string, options: { force?: boolean } = {}): Promise<OperationResult<"db.branch.promote">> =>
      this.transport.request("POST", `${this.base}/branches/${seg(name)}/promote`, { body: { force: options.force } }),
    delete: (name: string): Promise<OperationResult<"db.branch.delete">> =>
      this.transport.request("DELETE", `${this.base}/branches/${seg(name)}`),
  };

  /** The database as a SQLite file: the raw response, whose body streams it. */
  export(options: { signal?: AbortSignal } = {}): Promise<Response> {
    return this.transport.send("GET", `${this.base}/export`, { signal: options.signal });
  }
}
