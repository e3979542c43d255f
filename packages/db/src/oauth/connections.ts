import { notFound, prefixedId } from "@prim/engine";
import type pg from "pg";
import { type Actor, auditedTransaction } from "../control/workspace-audit.js";

/** The revocation message for every token of a grant (beside keys' hashes on `prim:revoked`). */
export const grantRevocation = (grantId: string) => `grant:${grantId}`;

/** The revocation message for one access token (by its hash). */
export const tokenRevocation = (tokenHash: string) => `token:${tokenHash}`;

/** A consented connection as the dashboard lists it ("Connected apps"). */
export interface Connection {
  id: string;
  client_id: string;
  client_name: string | null;
  user_id: string;
  workspace: string;
  group: string;
  tools: string[];
  /** Consented read-only: the app can only read, whatever tools it has. */
  read_only: boolean;
  created_at: number;
}

interface ConnectionRow {
  id: string;
  client_id: string;
  client_name: string | null;
  user_id: string;
  workspace_id: string;
  group_name: string;
  tools: string[];
  read_only: boolean;
  created_at: Date;
}

/**
 * Records the connection a finished consent created (the grant's id ties its tokens to it), as
 * `oauth.connect` by the consenting user in the same transaction.
 */
export async function recordConnection(
  pool: pg.Pool,
  input: {
    grantId: string;
    clientId: string;
    clientName: string | null;
    user: string;
    workspace: string;
    groupId: string;
    tools: readonly string[];
    /** The consent screen's "Read-only" choice. */
    readOnly?: boolean;
  },
): Promise<string> {
  const readOnly = input.readOnly === true;
  const id = prefixedId("conn").toLowerCase();
  await auditedTransaction(pool, async (client, record) => {
    const group = await client.query<{ name: string }>("SELECT name FROM groups WHERE id = $1", [input.groupId]);
    await client.query(
      `INSERT INTO oauth_connections (id, grant_id, client_id, client_name, user_id, workspace_id, group_id, tools, read_only)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        id,
        input.grantId,
        input.clientId,
        input.clientName,
        input.user,
        input.workspace,
        input.groupId,
        JSON.stringify(input.tools),
        readOnly,
      ],
    );
    await record(input.workspace, {
      actor: `user:${input.user}`,
      action: "oauth.connect",
      target: id,
      detail: {
        client_id: input.clientId,
        client_name: input.clientName,
        group: group.rows[0]?.name ?? null,
        tools: input.tools,
        read_only: readOnly,
      },
    });
  });
  return id;
}
/** A workspace's live connections, newest first. */
export async function listConnections(pool: pg.Pool, workspace: string): Promise<Connection[]> {
  const { rows } = await pool.query<ConnectionRow>(
    `SELECT c.id, c.client_id, c.client_name, c.user_id, c.workspace_id, g.name AS group_name, c.tools, c.read_only, c.created_at
       FROM oauth_connections c JOIN groups g ON g.id = c.group_id
      WHERE c.workspace_id = $1 AND c.revoked_at IS NULL
      ORDER BY c.created_at DESC, c.id DESC`,
    [workspace],
  );
  return rows.map((r) => ({
    id: r.id,
    client_id: r.client_id,
    client_name: r.client_name,
    user_id: r.user_id,
    workspace: r.workspace_id,
    group: r.group_name,
    tools: r.tools,
    read_only: r.read_only,
    created_at: r.created_at.getTime(),
  }));
}

/**
 * Ends connections and every token of their grants (the rows go; the resource server's caches
 * drop them on the message), so the next request with one of their tokens answers 401. Each
 * ended connection is recorded as `oauth.disconnect` by `actor` in the same transaction.
 */
async function revokeWhere(
  pool: pg.Pool,
  where: string,
  params: unknown[],
  publish: (message: string) => Promise<void>,
  actor: Actor,
  reason: string,
): Promise<string[]> {
  const grants = await auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ id: string; grant_id: string; workspace_id: string; client_id: string }>(
      `UPDATE oauth_connections SET revoked_at = now() WHERE revoked_at IS NULL AND ${where}
       RETURNING id, grant_id, workspace_id, client_id`,
      params,
    );
    const ids = rows.map((r) => r.grant_id);
    if (ids.length > 0) await client.query("DELETE FROM oauth_store WHERE grant_id = ANY($1::text[])", [ids]);
    for (const row of rows) {
      await record(row.workspace_id, {
        actor,
        action: "oauth.disconnect",
        target: row.id,
        detail: { client_id: row.client_id, reason },
      });
    }
    return ids;
  });
  for (const grant of grants) await publish(grantRevocation(grant));
  return grants;
}

/**
 * Ends one grant (the authorization server found a used code or refresh token presented again):
 * its connection ends with it.
 */
export async function revokeGrant(
  pool: pg.Pool,
  grantId: string,
  publish: (message: string) => Promise<void>,
): Promise<void> {
  const ended = await revokeWhere(pool, "grant_id = $1", [grantId], publish, "oauth", "code or refresh token reused");
  // A grant without a live connection (never consented to completion): its tokens still go.
  if (ended.length === 0) {
    await pool.query("DELETE FROM oauth_store WHERE grant_id = $1", [grantId]);
    await publish(grantRevocation(grantId));
  }
}

/** Disconnects one app (dashboard, "Connected apps"): its tokens fail on the next request. */
export async function disconnect(
  pool: pg.Pool,
  input: { workspace: string; id: string; actor?: Actor },
  publish: (message: string) => Promise<void>,
): Promise<void> {
  const ended = await revokeWhere(
    pool,
    "workspace_id = $1 AND id = $2",
    [input.workspace, input.id],
    publish,
    input.actor ?? "admin",
    "disconnected",
  );
  if (ended.length === 0) throw notFound(`connection '${input.id}'`);
}

/** Ends every connection of `workspace` (it is being deleted): answers how many. */
export async function endConnectionsIn(
  pool: pg.Pool,
  input: { workspace: string; actor: Actor },
  publish: (message: string) => Promise<void>,
): Promise<number> {
  return (await revokeWhere(pool, "workspace_id = $1", [input.workspace], publish, input.actor, "workspace deleted"))
    .length;
}

/** Ends every connection `user` made in `workspace` (they are leaving it): answers how many. */
export async function endConnectionsOf(
  pool: pg.Pool,
  input: { workspace: string; user: string; actor?: Actor },
  publish: (message: string) => Promise<void>,
): Promise<number> {
  const params = [input.workspace, input.user];
  const where = "workspace_id = $1 AND user_id = $2";
  return (await revokeWhere(pool, where, params, publish, input.actor ?? "admin", "member removed")).length;
}
