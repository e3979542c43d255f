import type { AuditEntry } from "@prim/wire";

// The audit trail lives in its own file, so its steady stream of writes does not contend with
// catalog writes. A rowid table with an integer sequence is the cheapest append; the two
// indexes serve the per-primitive and per-group audit routes.
export const AUDIT_SCHEMA = `
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  group_name TEXT NOT NULL,
  primitive TEXT NOT NULL,
  primitive_id TEXT,
  instance TEXT,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS audit_by_primitive ON audit (primitive_id, seq);
CREATE INDEX IF NOT EXISTS audit_by_group ON audit (group_name, seq);
`;

/** The columns an append writes, in the order of `auditRow`'s values. */
const AUDIT_COLUMNS = "id, ts, group_name, primitive, primitive_id, instance, actor, action, target, detail";
export const AUDIT_COLUMN_COUNT = 10;

/** An INSERT of `rows` entries at once, positional (`auditRow`'s values, row after row). */
export function auditInsert(rows: number): string {
  const one = `(${Array(AUDIT_COLUMN_COUNT).fill("?").join(",")})`;
  return `INSERT INTO audit (${AUDIT_COLUMNS}) VALUES ${Array(rows).fill(one).join(",")}`;
}

/** An entry as the values `auditInsert` binds, `detail` serialised (as it is stored). */
export function auditRow(e: AuditEntry): unknown[] {
  return [
    e.id,
    e.ts,
    e.group,
    e.primitive,
    e.primitive_id,
    e.instance,
    e.actor,
    e.action,
    e.target,
    e.detail === null ? null : JSON.stringify(e.detail),
  ];
}
