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

export const AUDIT_INSERT = `INSERT INTO audit (id, ts, group_name, primitive, primitive_id, instance, actor, action, target, detail)
  VALUES (@id, @ts, @group, @primitive, @primitive_id, @instance, @actor, @action, @target, @detail)`;
