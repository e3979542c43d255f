import { prefixedId } from "@prim/engine";
import type pg from "pg";
import { ensureAuditDay } from "../catalog/audit-partitions.js";
import { inTransaction } from "../connect.js";

/**
 * Control-plane entries in a workspace's audit trail (CLOUD.md: "Audit of the control plane"):
 * the spec's AuditEntry shape with `primitive` = `workspace` (so `type=workspace` finds them),
 * `group` empty (they concern no group), `primitive_id` and `instance` null, in the same table,
 * filters, retention and plan rule as the data entries. A key or token appears only by its id
 * and `start`, never itself.
 */

/**
 * Who did it: a dashboard user (`user:<id>`), an API key (`key:<id>`), the operator's
 * `prim admin` (`admin`), a Stripe webhook (`stripe`), the billing job ending an unpaid grace
 * period (`billing`), the authorization server ending a replayed grant (`oauth`), or the webhook
 * dispatcher disabling an endpoint that failed for 24 hours (`webhooks`).
 */
export type Actor = `user:${string}` | `key:${string}` | "admin" | "stripe" | "billing" | "oauth" | "webhooks";

/** The control actions recorded (CLOUD.md, "Audit of the control plane"). */
export type ControlAction =
  | "workspace.create"
  | "workspace.rename"
  | "workspace.delete"
  | "workspace.move"
  | "member.add"
  | "member.remove"
  | "member.role"
  | "invitation.create"
  | "invitation.accept"
  | "invitation.withdraw"
  | "key.create"
  | "key.mint"
  | "key.attenuate"
  | "key.revoke"
  | "key.budget_exhausted"
  | "plan.change"
  | "oauth.connect"
  | "oauth.disconnect"
  | "secret_export.enable"
  | "secret_export.disable"
  | "webhook.create"
  | "webhook.delete"
  | "webhook.enable"
  | "webhook.disable"
  | "webhook.redeliver";

export interface WorkspaceAuditEntry {
  actor: Actor | string;
  action: ControlAction;
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

/** Records an entry in the transaction it is given (`auditedTransaction`'s second argument). */
export type RecordAudit = (workspace: string, entry: WorkspaceAuditEntry) => Promise<void>;

/**
 * A transaction whose control changes are audited with it: `record` appends an entry stamped
 * with the transaction's time (today's audit partition made first), so the change and its
 * entry commit or roll back together.
 */
export async function auditedTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, record: RecordAudit) => Promise<T>,
  now: () => number = Date.now,
): Promise<T> {
  const at = now();
  await ensureAuditDay(pool, at);
  return inTransaction(pool, (client) =>
    fn(client, (workspace, entry) => recordWorkspaceAudit(client, workspace, entry, at)),
  );
}

/**
 * `workspace.move`: the move's record, written by the move (apps/api's cell service) when the
 * placement flips — in the flip's transaction when given its `client`, else on its own.
 */
export async function recordWorkspaceMove(
  pool: pg.Pool,
  input: { workspace: string; from: string | null; to: string; actor?: Actor },
  client?: pg.ClientBase,
  at: number = Date.now(),
): Promise<void> {
  const entry: WorkspaceAuditEntry = {
    actor: input.actor ?? "admin",
    action: "workspace.move",
    target: input.workspace,
    detail: { from: input.from, to: input.to },
  };
  await ensureAuditDay(pool, at);
  if (client !== undefined) await recordWorkspaceAudit(client, input.workspace, entry, at);
  else await inTransaction(pool, (c) => recordWorkspaceAudit(c, input.workspace, entry, at));
}
