import type { BranchInfo, QueryResult } from "@prim/wire";
import type { OutboxRow } from "./host-outbox.js";

export type { BranchInfo, QueryResult };

/** Messages between the engine and its SQL host process (see pool.ts). */

export interface Statement {
  sql: string;
  params?: unknown;
}

/** Where a database lives: its main file and its directory of branches and metadata. */
export interface DbLocation {
  file: string;
  dir: string;
  /** A branch name, or undefined for main. */
  branch?: string | undefined;
}

export type HostRequest =
  | {
      kind: "exec";
      at: DbLocation;
      statements: Statement[];
      batch: boolean;
      readOnly: boolean;
      /** Messages to write into main's outbox in the statements' transaction (host-outbox.ts). */
      outbox?: OutboxRow[];
      /** Set in the engine when the host's answer says the statements changed the file. */
      wrote?: boolean;
    }
  | { kind: "tables"; at: DbLocation }
  | { kind: "table"; at: DbLocation; name: string }
  | { kind: "branch.create"; at: DbLocation; name: string; now: number }
  | { kind: "branch.list"; at: DbLocation }
  | { kind: "branch.promote"; at: DbLocation; name: string; force: boolean }
  | { kind: "branch.delete"; at: DbLocation; name: string }
  | { kind: "backup"; at: DbLocation; dest: string }
  | { kind: "restore"; at: DbLocation; src: string }
  | { kind: "check"; at: DbLocation; schema: SchemaRow[] | null }
  | { kind: "changes.open"; at: DbLocation }
  | { kind: "outbox.read"; at: DbLocation; limit: number }
  | { kind: "outbox.delete"; at: DbLocation; ids: string[] }
  | { kind: "close"; at: DbLocation };

/** One row of a file's `sqlite_schema`, as `SCHEMA_ROWS_SQL` reads it (root pages left out). */
export interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** Every schema object of a file, in one order, to compare two files' schemas. */
export const SCHEMA_ROWS_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name";

/** A `check` request's answer: the file is fit to import, or what is wrong with it. */
export type FileCheck = { ok: true } | { ok: false; problem: string };

/** Caps on what one statement may return; past them `truncated` is true. */
export const MAX_RESULT_ROWS = 10_000;
export const MAX_RESULT_BYTES = 10 * 1024 * 1024;
/** A statement (or a whole batch) is stopped after this long. */
export const STATEMENT_TIMEOUT_MS = 5_000;
