import type { TableDetail, TableSummary } from "@prim/wire";
import type { SqlHost } from "../../sql-host/pool.js";
import type { BranchInfo, DbLocation, HostRequest, QueryResult, Statement } from "../../sql-host/protocol.js";
import { DirectReads } from "./direct-reads.js";

export type { TableDetail, TableSummary };

/**
 * A `db` primitive: its file is the user's database, reached through the SQL host — except
 * bounded reads of main, which the engine answers itself (see direct-reads.ts).
 */
export class DbStore {
  private readonly direct: DirectReads;

  constructor(
    private readonly host: SqlHost,
    private readonly file: string,
    private readonly dir: string,
  ) {
    this.direct = new DirectReads(file);
  }

  /**
   * A statement run by the SQL host (a query the engine could not answer itself, or a batch).
   * It may write, so the direct reads' snapshot ends before it is sent and again when it is
   * answered: no read after the answer misses what it wrote.
   */
  private runOnHost<T>(req: HostRequest): Promise<T> {
    return this.bracketed(req, () => this.direct.release());
  }

  /**
   * A request that replaces or removes main's file (promote, restore, close): the direct
   * connection is dropped before and after, so it never reads a file the host swapped or unlinked.
   * (Branch files are never read directly.)
   */
  private manage<T>(req: HostRequest): Promise<T> {
    return this.bracketed(req, () => this.direct.close());
  }

  private async bracketed<T>(req: HostRequest, end: () => void): Promise<T> {
    end();
    try {
      return await this.host.request<T>(req);
    } finally {
      end();
    }
  }

  private at(branch?: string): DbLocation {
    return { file: this.file, dir: this.dir, branch };
  }

  query(statement: Statement, options: { branch?: string; readOnly: boolean }): Promise<QueryResult> {
    const answered = options.branch === undefined ? this.direct.tryQuery(statement) : undefined;
    if (answered !== undefined) return Promise.resolve(answered);
    return this.runOnHost({
      kind: "exec",
      at: this.at(options.branch),
      statements: [statement],
      batch: false,
      readOnly: options.readOnly,
    });
  }

  batch(statements: Statement[], options: { branch?: string; readOnly: boolean }): Promise<{ results: QueryResult[] }> {
    return this.runOnHost({
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
    return this.manage({ kind: "branch.promote", at: this.at(), name, force });
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
    return this.manage({ kind: "restore", at: this.at(), src });
  }

  close(): Promise<unknown> {
    return this.manage({ kind: "close", at: this.at() });
  }
}
