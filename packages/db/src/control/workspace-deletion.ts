import { invalid, notFound, ServiceError } from "@prim/engine";
import type pg from "pg";
import { endConnectionsIn } from "../oauth/connections.js";
import type { Plan } from "./plans.js";
import { type Actor, auditedTransaction } from "./workspace-audit.js";

/**
 * Deleting a workspace (CLOUD.md, Credentials: owners only), in two control-plane steps around
 * the data's deletion in its cell (the caller's, through the Invoker):
 *
 * 1. `closeWorkspace` — the name typed again must match; every credential ends at once: live
 *    API keys revoked (`key.revoke`), OAuth connections ended with their tokens
 *    (`oauth.disconnect`), pending invitations withdrawn (`invitation.withdraw`), each
 *    published on `prim:revoked` — so nothing can write while the data goes. It answers what
 *    the rest needs: the groups to delete in the cell, the Stripe subscription to cancel.
 * 2. `dropWorkspace` — once no group is left: the workspace row goes, and with it (ON DELETE
 *    CASCADE) members, keys, invitations, connections, usage, billing rows and the placement,
 *    in the transaction that records `workspace.delete`. The audit table has no foreign key, so
 *    that entry (and every earlier one) stays for the audit retention: `prim admin workspace
 *    deleted` lists them.
 *
 * Both steps may be run again: a deletion interrupted after step 1 (a cell down) is finished by
 * deleting again; nothing is ever dropped while a group (and so files in a cell) remains.
 */

export interface ClosedWorkspace {
  id: string;
  name: string;
  plan: Plan;
  /** The groups still in the workspace (ids and names): the cell deletes them next. */
  groups: { id: string; name: string }[];
  /** The Stripe subscription to cancel, when one is live. */
  subscription: { id: string; status: string } | null;
  keys: number;
  connections: number;
  invitations: number;
}

/** Subscription states Stripe has ended already (nothing to cancel). */
const ENDED = ["canceled", "unpaid", "incomplete_expired"];

/**
 * Step 1: checks `name` against the workspace's and that `user` owns it (under the row's lock),
 * then ends every credential. Not an owner: 403 `forbidden`; a name that does not match: 400
 * `invalid_request`, and nothing changes.
 */
export async function closeWorkspace(
  pool: pg.Pool,
  input: { workspace: string; name: string; user: string; actor?: Actor },
  publish: (message: string) => Promise<void>,
): Promise<ClosedWorkspace> {
  const actor = input.actor ?? `user:${input.user}`;
  const closed = await auditedTransaction(pool, async (client, record) => {
    const ws = await client.query<{ name: string; plan: Plan; role: string | null }>(
      `SELECT w.name, w.plan, m.role FROM workspaces w
         LEFT JOIN members m ON m.workspace_id = w.id AND m.user_id = $2
        WHERE w.id = $1 FOR UPDATE OF w`,
      [input.workspace, input.user],
    );
    const row = ws.rows[0];
    if (row === undefined || row.role === null) throw notFound(`workspace '${input.workspace}'`);
    if (row.role !== "owner") throw new ServiceError("forbidden", "only an owner deletes a workspace");
    if (input.name !== row.name) throw invalid(`name: type the workspace's name '${row.name}' to delete it`);
    const keys = await client.query<{ id: string; hash: string; start: string }>(
      "UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND revoked_at IS NULL RETURNING id, hash, start",
      [input.workspace],
    );
    for (const key of keys.rows) {
      await record(input.workspace, {
        actor,
        action: "key.revoke",
        target: key.id,
        detail: { start: key.start, reason: "workspace deleted" },
      });
    }
    const invitations = await client.query<{ id: string; email: string; role: string }>(
      `UPDATE invitations SET revoked_at = now()
        WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id, email, role`,
      [input.workspace],
    );
    for (const inv of invitations.rows) {
      await record(input.workspace, {
        actor,
        action: "invitation.withdraw",
        target: inv.id,
        detail: { email: inv.email, role: inv.role, reason: "workspace deleted" },
      });
    }
    const groups = await client.query<{ id: string; name: string }>(
      "SELECT id, name FROM groups WHERE workspace_id = $1 ORDER BY name",
      [input.workspace],
    );
    const sub = await client.query<{ stripe_subscription_id: string; status: string }>(
      "SELECT stripe_subscription_id, status FROM subscriptions WHERE workspace_id = $1",
      [input.workspace],
    );
    const live = sub.rows[0] !== undefined && !ENDED.includes(sub.rows[0].status) ? sub.rows[0] : null;
    return {
      id: input.workspace,
      name: row.name,
      plan: row.plan,
      groups: groups.rows,
      subscription: live === null ? null : { id: live.stripe_subscription_id, status: live.status },
      hashes: keys.rows.map((k) => k.hash),
      invitations: invitations.rows.length,
    };
  });
  const { hashes, ...rest } = closed;
  for (const hash of hashes) await publish(hash);
  const connections = await endConnectionsIn(pool, { workspace: input.workspace, actor }, publish);
  return { ...rest, keys: hashes.length, connections };
}

/**
 * Step 2: drops the workspace row (and every control row with it), recorded as
 * `workspace.delete` with `detail` (what went). A group still there (made since step 1): 409
 * `conflict`, nothing dropped — delete again.
 */
export async function dropWorkspace(
  pool: pg.Pool,
  input: { workspace: string; actor: Actor; detail: Record<string, unknown> },
): Promise<{ id: string; name: string; members: number }> {
  return auditedTransaction(pool, async (client, record) => {
    const ws = await client.query<{ name: string; plan: string }>(
      "SELECT name, plan FROM workspaces WHERE id = $1 FOR UPDATE",
      [input.workspace],
    );
    const row = ws.rows[0];
    if (row === undefined) throw notFound(`workspace '${input.workspace}'`);
    const left = await client.query("SELECT 1 FROM groups WHERE workspace_id = $1 LIMIT 1", [input.workspace]);
    if ((left.rowCount ?? 0) > 0) {
      throw new ServiceError("conflict", "a group was created while the workspace was being deleted; delete it again");
    }
    const members = await client.query<{ user_id: string; role: string }>(
      "SELECT user_id, role FROM members WHERE workspace_id = $1 ORDER BY role, user_id",
      [input.workspace],
    );
    await client.query("DELETE FROM workspaces WHERE id = $1", [input.workspace]);
    await record(input.workspace, {
      actor: input.actor,
      action: "workspace.delete",
      target: input.workspace,
      detail: {
        name: row.name,
        plan: row.plan,
        members: members.rows.map((m) => ({ user: `user:${m.user_id}`, role: m.role })),
        ...input.detail,
      },
    });
    return { id: input.workspace, name: row.name, members: members.rows.length };
  });
}

export interface DeletedWorkspace {
  id: string;
  name: string;
  actor: string;
  deleted_at: number;
  detail: Record<string, unknown>;
}

/** The `workspace.delete` entries still in the audit retention, newest first (`prim admin`). */
export async function deletedWorkspaces(pool: pg.Pool, limit = 100): Promise<DeletedWorkspace[]> {
  const { rows } = await pool.query<{
    workspace_id: string;
    actor: string;
    ts: string;
    detail: Record<string, unknown> | null;
  }>(
    `SELECT workspace_id, actor, ts, detail FROM audit
      WHERE primitive = 'workspace' AND action = 'workspace.delete' ORDER BY ts DESC, seq DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.workspace_id,
    name: String(r.detail?.name ?? ""),
    actor: r.actor,
    deleted_at: Number(r.ts),
    detail: r.detail ?? {},
  }));
}
