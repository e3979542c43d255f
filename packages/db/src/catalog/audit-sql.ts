import type { AuditFilter, AuditRecord } from "@prim/engine";

/** Escapes LIKE wildcards so a prefix filter matches literally. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The WHERE clause of an audit listing (every filter of the spec), bound to one workspace. */
export function auditWhere(workspace: string, filter: AuditFilter): { where: string; args: unknown[] } {
  const args: unknown[] = [workspace];
  const where = ["workspace_id = $1"];
  const add = (clause: (n: string) => string, value: unknown) => where.push(clause(`$${args.push(value)}`));
  if (filter.group !== undefined) add((p) => `group_name = ${p}`, filter.group);
  if (filter.type !== undefined) add((p) => `primitive = ${p}`, filter.type);
  if (filter.primitive !== undefined) add((p) => `primitive_id = ${p}`, filter.primitive);
  if (filter.action !== undefined) {
    const a = filter.action;
    if (a.endsWith("*")) add((p) => `action LIKE ${p}`, likePrefix(a.slice(0, -1)));
    else if (a.endsWith(".")) add((p) => `action LIKE ${p}`, likePrefix(a));
    else add((p) => `action = ${p}`, a);
  }
  if (filter.actor !== undefined) {
    const a = filter.actor;
    if (a.endsWith("*")) add((p) => `actor LIKE ${p}`, likePrefix(a.slice(0, -1)));
    else add((p) => `actor = ${p}`, a);
  }
  if (filter.since !== undefined) add((p) => `ts >= ${p}`, filter.since);
  if (filter.until !== undefined) add((p) => `ts <= ${p}`, filter.until);
  if (filter.beforeSeq !== undefined) add((p) => `seq < ${p}`, filter.beforeSeq);
  return { where: where.join(" AND "), args };
}

interface AuditRow {
  seq: string;
  ts: string;
  id: string;
  group_name: string;
  primitive: AuditRecord["primitive"];
  primitive_id: string | null;
  instance: string | null;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
}

export const toAudit = (row: AuditRow): AuditRecord => ({
  seq: Number(row.seq),
  id: row.id,
  ts: Number(row.ts),
  group: row.group_name,
  primitive: row.primitive,
  primitive_id: row.primitive_id,
  instance: row.instance,
  actor: row.actor,
  action: row.action,
  target: row.target,
  detail: row.detail,
});
