import Database from "better-sqlite3";
import { setRecent } from "../../core/recent.js";
import { bindings, collectRows } from "../../sql-host/host-exec.js";
import type { QueryResult, Statement } from "../../sql-host/protocol.js";

/**
 * Opcodes a statement may use to run in the engine's own process. Each runs in time bounded by
 * the size of the values it touches (a B-tree seek, a column read, a comparison, a constant);
 * what loops over rows (`Next`, `Rewind`, `Count`, sorters, virtual tables, coroutines), may do
 * unbounded work in one instruction (`Function`: `randomblob(1e9)`) or builds values larger
 * than its inputs (`Concat`: `:a||:a||…` doubles at every step, N² work) is not here.
 */
const BOUNDED_OPCODES = new Set([
  "Init",
  "Goto",
  "Halt",
  "Transaction",
  "TableLock",
  "OpenRead",
  "ColumnsUsed",
  "SeekRowid",
  "NotExists",
  "SeekGE",
  "SeekGT",
  "SeekLE",
  "SeekLT",
  "IdxGE",
  "IdxGT",
  "IdxLE",
  "IdxLT",
  "DeferredSeek",
  "IdxRowid",
  "Rowid",
  "Column",
  "ResultRow",
  "Variable",
  "Integer",
  "Int64",
  "Real",
  "String8",
  "String",
  "Null",
  "Blob",
  "Copy",
  "SCopy",
  "IntCopy",
  "Move",
  "Affinity",
  "RealAffinity",
  "MustBeInt",
  "Cast",
  "IsNull",
  "NotNull",
  "Eq",
  "Ne",
  "Lt",
  "Le",
  "Gt",
  "Ge",
  "If",
  "IfNot",
  "Not",
  "BitNot",
  "And",
  "Add",
  "Subtract",
  "Multiply",
  "Divide",
  "Remainder",
  "BitAnd",
  "BitOr",
  "ShiftLeft",
  "ShiftRight",
  "Or",
  "Noop",
  "Explain",
]);

/**
 * The work budget of a statement answered in the engine (issue 15: instruction kinds alone did
 * not bound it). better-sqlite3 has no progress handler, so the budget is static, checked
 * before a statement runs: every instruction runs at most once and none builds a value larger
 * than its inputs, so the work is at most (instructions) × (largest value touched), where a
 * value is a parameter, a constant of the SQL text or a stored column. The first two are
 * bounded here; a stored value is bounded after the fact (below). Past any limit the statement
 * goes to the SQL host, with its 5 s limit. Measured: a 16 KiB key through a 256-instruction
 * program is well under a millisecond; a point read has ~10–40 instructions.
 */
export const MAX_DIRECT_INSTRUCTIONS = 256;
/** Total bytes of text and BLOB parameters (a key, not a document). */
export const MAX_DIRECT_PARAM_BYTES = 16 * 1024;
/**
 * A statement whose answer was larger than this (a stored document read by key) is answered by
 * the host from then on, until the schema changes: one such read costs the engine a linear
 * copy once per statement text, never again.
 */
export const MAX_DIRECT_RESULT_BYTES = 256 * 1024;

/** Bytes of the text and BLOB parameters, plus a little per parameter (so a huge array counts). */
export function parameterBytes(params: unknown): number {
  if (params === undefined || params === null) return 0;
  if (typeof params !== "object") return typeof params === "string" ? params.length : 8;
  let bytes = 0;
  const values = Array.isArray(params) ? params : Object.values(params);
  for (const v of values) {
    if (typeof v === "string") bytes += v.length + 8;
    else if (v !== null && typeof v === "object") {
      const b64 = (v as { base64?: unknown }).base64;
      bytes += typeof b64 === "string" ? b64.length + 8 : 8;
    } else bytes += 8;
  }
  return bytes;
}

interface Instruction {
  addr: number;
  opcode: string;
  p2: number;
}

/**
 * Whether a compiled program finishes in bounded time whatever the data: only bounded opcodes,
 * and no jump backwards except the prologue's (`Init` jumps to the `Transaction` at the end,
 * whose `Goto` returns to the start), so every instruction runs at most once.
 */
export function isBoundedProgram(program: Instruction[]): boolean {
  if (program.length > MAX_DIRECT_INSTRUCTIONS) return false;
  const last = program.length - 1;
  return program.every((op, i) => {
    if (!BOUNDED_OPCODES.has(op.opcode)) return false;
    if (op.opcode === "Goto" && op.p2 <= op.addr) return i === last && op.p2 === 1;
    // Every other jump target is a later instruction (p2 is not a jump for most opcodes, and
    // for those a value below the address is still a register number, never taken as a jump).
    return true;
  });
}

/** What a statement compiled to under one schema: a bounded read, ready to run, or not. */
type Verdict =
  | { schemaVersion: number; bounded: false }
  | { schemaVersion: number; bounded: true; stmt: Database.Statement; columns: string[] };

const MAX_VERDICTS = 256;

/**
 * Point reads on main, answered in the engine's process on a read-only connection instead of
 * through the SQL host. Only statements SQLite compiles to a bounded program qualify (a read by
 * primary key or unique index, a constant): they cannot run long, so they need no timeout, and
 * they skip a round trip to the host. Everything else — and anything that fails here — goes to
 * the host, which gives the answer.
 *
 * Reads share one read transaction (one WAL snapshot) until the end of the event loop's turn,
 * or until the store sends the host a request that may write (`release`), whichever is first.
 * Only the host writes the file and the store releases before every such request and again on
 * its answer, so a snapshot never misses a write that was acknowledged; and within a
 * transaction the schema cannot change, so a statement runs as the program that was judged
 * (dropping an index would otherwise recompile it into a scan).
 */
export class DirectReads {
  private conn: Connection | null = null;
  private readonly verdicts = new Map<string, Verdict>();
  private schemaVersion = -1;
  private releaseQueued = false;
  private readonly releaseTurn = () => {
    this.releaseQueued = false;
    this.release();
  };

  constructor(private readonly file: string) {}

  /** The result, or undefined when the host must run the statement. */
  tryQuery(statement: Statement): QueryResult | undefined {
    if (statement.params !== undefined && parameterBytes(statement.params) > MAX_DIRECT_PARAM_BYTES) return undefined;
    const known = this.verdicts.get(statement.sql);
    // An unbounded verdict holds until the schema changes (a new unique index may bound it);
    // that is looked at only when a snapshot is open anyway, so host-bound statements cost
    // nothing here.
    if (known?.bounded === false && !(this.conn?.db.inTransaction && known.schemaVersion !== this.schemaVersion)) {
      return undefined;
    }
    const conn = this.snapshot();
    if (conn === null) return undefined;
    try {
      const verdict = known?.schemaVersion === this.schemaVersion ? known : this.judge(conn, statement);
      if (!verdict.bounded) return undefined;
      const { rows, truncated, bytes } = collectRows(
        verdict.stmt.all(...bindings(statement.params, "sql.params")) as Record<string, unknown>[],
      );
      if (bytes > MAX_DIRECT_RESULT_BYTES) {
        setRecent(this.verdicts, statement.sql, { schemaVersion: this.schemaVersion, bounded: false }, MAX_VERDICTS);
      }
      return { columns: verdict.columns, rows, rows_affected: 0, last_insert_rowid: null, truncated };
    } catch {
      return undefined; // the host runs it and reports what is wrong
    }
  }

  /** Ends the shared read transaction: the host may be about to write, or has written. */
  release(): void {
    if (this.conn?.db.inTransaction) this.conn.commit.run();
  }

  /** Drops the connection (the host is about to replace or remove the file, or did). */
  close(): void {
    this.release();
    this.conn?.db.close();
    this.conn = null;
    this.verdicts.clear();
  }

  /** The connection inside a read transaction, begun now if none is open. */
  private snapshot(): Connection | null {
    const conn = this.connection();
    if (conn === null || conn.db.inTransaction) return conn;
    try {
      conn.begin.run();
      this.schemaVersion = conn.schemaVersion.get() as number;
    } catch {
      this.release();
      return null;
    }
    if (!this.releaseQueued) {
      this.releaseQueued = true;
      setImmediate(this.releaseTurn);
    }
    return conn;
  }

  private judge({ db, refresh }: Connection, statement: Statement): Verdict {
    let verdict: Verdict = { schemaVersion: this.schemaVersion, bounded: false };
    try {
      // Preparing compiles against the schema this connection last loaded, which may be older
      // than the snapshot's: a statement that reads the schema table makes SQLite reload it.
      refresh.get();
      const stmt = db.prepare(statement.sql);
      if (stmt.reader && stmt.readonly) {
        // EXPLAIN needs every parameter bound; the request's own values do.
        const program = db.prepare(`EXPLAIN ${statement.sql}`).all(...bindings(statement.params, "sql.params"));
        if (isBoundedProgram(program as Instruction[])) {
          stmt.safeIntegers(true);
          const columns = stmt.columns().map((c) => c.name);
          verdict = { schemaVersion: this.schemaVersion, bounded: true, stmt, columns };
        }
      }
    } catch {
      // Not remembered: the host reports what is wrong, and once it is fixed (the table
      // created) the statement is judged again.
      return verdict;
    }
    setRecent(this.verdicts, statement.sql, verdict, MAX_VERDICTS);
    return verdict;
  }

  private connection(): Connection | null {
    if (this.conn !== null) return this.conn;
    let db: Database.Database;
    try {
      db = new Database(this.file, { readonly: true, fileMustExist: true });
    } catch {
      return null; // the host has not created it yet
    }
    this.conn = {
      db,
      begin: db.prepare("BEGIN"),
      commit: db.prepare("COMMIT"),
      schemaVersion: db.prepare("PRAGMA schema_version").pluck(),
      refresh: db.prepare("SELECT 1 FROM sqlite_schema LIMIT 1"),
    };
    return this.conn;
  }
}

interface Connection {
  db: Database.Database;
  begin: Database.Statement;
  commit: Database.Statement;
  schemaVersion: Database.Statement;
  refresh: Database.Statement;
}
