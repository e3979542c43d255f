import Database from "better-sqlite3";
import { type FileCheck, SCHEMA_ROWS_SQL, type SchemaRow } from "./protocol.js";

/**
 * The check of a SQLite file that came from outside (a group archive's entry), run in the SQL
 * host, never in the engine's process (issue 35): the file may be anything, and whatever it
 * makes SQLite do must stay under the host's time limit. The connection is read-only (nothing
 * it holds can fire: no trigger runs without a write) and `trusted_schema=OFF` (no function of
 * its schema runs unless SQLite knows it to be harmless). Then:
 * - with `expected` (every type but `db`): its schema must be exactly that one — the schema the
 *   type's own code makes in a fresh file — so it brings no trigger, view, virtual table,
 *   table, column, index or constraint of its own;
 * - `PRAGMA quick_check` must answer ok (a truncated or damaged file does not).
 * A `db` file (`expected` null) is the user's database: its triggers and views are kept, and
 * run later only in the host, like every statement of the user's.
 */
export function checkFile(path: string, expected: SchemaRow[] | null): FileCheck {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    return { ok: false, problem: `cannot be opened as SQLite (${messageOf(err)})` };
  }
  try {
    db.pragma("trusted_schema = OFF");
    db.pragma("cell_size_check = ON");
    let rows: SchemaRow[];
    try {
      rows = db.prepare(SCHEMA_ROWS_SQL).all() as SchemaRow[];
    } catch (err) {
      return { ok: false, problem: `is not a readable SQLite database (${messageOf(err)})` };
    }
    if (expected !== null) {
      const difference = schemaDifference(rows, expected);
      if (difference !== null) return { ok: false, problem: difference };
    }
    const verdict = db.pragma("quick_check(3)", { simple: false }) as { quick_check: string }[];
    const problems = verdict.map((r) => r.quick_check).filter((r) => r !== "ok");
    if (problems.length > 0) return { ok: false, problem: `fails SQLite's quick_check (${problems.join("; ")})` };
    return { ok: true };
  } catch (err) {
    return { ok: false, problem: `fails SQLite's quick_check (${messageOf(err)})` };
  } finally {
    db.close();
  }
}

const describe = (row: SchemaRow) => `${row.type} '${row.name}'`;

/** The first way `rows` differ from `expected` (null: none), in words. */
export function schemaDifference(rows: SchemaRow[], expected: SchemaRow[]): string | null {
  const key = (row: SchemaRow) => `${row.type}\u0000${row.name}`;
  const wanted = new Map(expected.map((row) => [key(row), row]));
  for (const row of rows) {
    const twin = wanted.get(key(row));
    if (twin === undefined) return `holds ${describe(row)}, which this type's files do not have`;
    if (twin.tbl_name !== row.tbl_name || twin.sql !== row.sql) {
      return `has ${describe(row)} unlike this type's files (${clip(row.sql ?? "no SQL")})`;
    }
    wanted.delete(key(row));
  }
  // Files made before change logs (or a queue's outbox record) existed lack their tables, which
  // opening the file adds.
  const missing = [...wanted.values()].find((row) => !LATER_TABLES.has(row.tbl_name));
  return missing === undefined ? null : `lacks ${describe(missing)}`;
}

/**
 * Tables an older file may lack: the change log's (primitives/changes/log.ts) and a queue's
 * record of the db outbox messages it took in (primitives/queue/inbox.ts).
 */
const LATER_TABLES: ReadonlySet<string> = new Set(["prim_changes", "prim_changes_state", "prim_outbox_seen"]);

/** Schema text quoted in a message: on one line, cut short (it is whatever the file says). */
function clip(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
