import { prefixedId } from "@prim/engine";
import type pg from "pg";

/**
 * Control-plane entries in a workspace's audit trail (CLOUD.md: "Audit of the control plane"):
 * the spec's AuditEntry shape with `primitive` = `workspace` (so `type=workspace` finds them),
 * `group` empty (they concern no group), `primitive_id` and `instance` null, in the same table,
 * filters, retention and plan rule as the data entries.
 */
export interface WorkspaceAuditEntry {
  /** `user:<id>`, `key:<id>`, or `admin` for the operator's `prim admin`. */
  actor: string;
  /** e.g. `secret_export.enable`. */
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
}

/** Appends one control-plane entry (inside the caller's transaction, with the change it records). */
export async function recordWorkspaceAudit(
  client: pg.ClientBase,
  workspace: string,
  entry: WorkspaceAuditEntry,
  at: number,
): Promise<void> {
  await client.query(
    `INSERT INTO audit (ts, id, workspace_id, group_name, primitive, primitive_id, instance, actor, action, target, detail)
     VALUES ($1, $2, $3, '', 'workspace', NULL, NULL, $4, $5, $6, $7)`,
    [at, prefixedId("aud", at), workspace, entry.actor, entry.action, entry.target, entry.detail],
  );
}
