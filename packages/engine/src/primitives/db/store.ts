import type { BranchInfo, DbLocation, QueryResult, Statement } from "./protocol.js";
import type { SqlHost } from "./sql-host.js";

export interface TableSummary {
  name: string;
  type: "table" | "view";
}

export interface TableDetail extends TableSummary {
  sql: string;
  columns: { name: string; type: string; notnull: boolean; default: string | null; pk: number }[];
}

/** A `db` primitive: its file is the user's database, reached through the SQL host. */
export class DbStore {
  constructor(
    private readonly host: SqlHost,
    private readonly file: string,
    private readonly dir: string,
  ) {}

  private at(branch?: string): DbLocation {
    return { file: this.file, dir: this.dir, branch };
  }

  query(statement: Statement, options: { branch?: string; readOnly: boolean }): Promise<QueryResult> {
    return this.host.request({
      kind: "exec",
      at: this.at(options.branch),
      statements: [statement],
      batch: false,
      readOnly: options.readOnly,
    });
  }

  batch(statements: Statement[], options: { branch?: string; readOnly: boolean }): Promise<{ results: QueryResult[] }> {
    return this.host.request({
      kind: "exec",
      at: this.at(options.branch),
      statements,
      batch: true,
      readOnly: options.readOnly,
    });
  }

  tables(branch?: string): Promise<TableSummary[]> {
    return this.host.request({ kind: "tables", at: this.at(branch) });
  }

  table(name: string, branch?: string): Promise<TableDetail> {
    return this.host.request({ kind: "table", at: this.at(branch), name });
  }

  createBranch(name: string, now: number): Promise<BranchInfo> {
    return this.host.request({ kind: "branch.create", at: this.at(), name, now });
  }

  branches(): Promise<BranchInfo[]> {
    return this.host.request({ kind: "branch.list", at: this.at() });
  }

  promote(name: string, force: boolean): Promise<{ promoted: string }> {
    return this.host.request({ kind: "branch.promote", at: this.at(), name, force });
  }

  deleteBranch(name: string): Promise<{ deleted: string }> {
    return this.host.request({ kind: "branch.delete", at: this.at(), name });
  }

  /** A consistent copy of the database (SQLite's backup API) written to `dest`. */
  backup(dest: string): Promise<unknown> {
    return this.host.request({ kind: "backup", at: this.at(), dest });
  }

  /** Makes main exactly the database at `src` (a snapshot); branches are kept. */
  restore(src: string): Promise<unknown> {
    return this.host.request({ kind: "restore", at: this.at(), src });
  }

  close(): Promise<unknown> {
    return this.host.request({ kind: "close", at: this.at() });
  }
}
