import { notFound, prefixedId } from "@prim/engine";
import type pg from "pg";
import { inTransaction } from "../connect.js";

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
  created_at: Date;
}

/** Records the connection a finished consent created (the grant's id ties its tokens to it). */
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
  },
): Promise<string> {
  const id = prefixedId("conn").toLowerCase();
  await pool.query(
    `INSERT INTO oauth_connections (id, grant_id, client_id, client_name, user_id, workspace_id, group_id, tools)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      id,
      input.grantId,
      input.clientId,
      input.clientName,
      input.user,
      input.workspace,
      input.groupId,
      JSON.stringify(input.tools),
    ],
  );
  return id;
}

/** A workspace's live connections, newest first. */
export async function listConnections(pool: pg.Pool, workspace: string): Promise<Connection[]> {
  const { rows } = await pool.query<ConnectionRow>(
    `SELECT c.id, c.client_id, c.client_name, c.user_id, c.workspace_id, g.name AS group_name, c.tools, c.created_at
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
    created_at: r.created_at.getTime(),
  }));
}

/**
 * Ends connections and every token of their grants (the rows go; the resource server's caches
 * drop them on the message), so the next request with one of their tokens answers 401.
 */
async function revokeWhere(
  pool: pg.Pool,
  where: string,
  params: unknown[],
  publish: (message: string) => Promise<void>,
): Promise<string[]> {
  const grants = await inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ grant_id: string }>(
      `UPDATE oauth_connections SET revoked_at = now() WHERE revoked_at IS NULL AND ${where} RETURNING grant_id`,
      params,
    );
    const ids = rows.map((r) => r.grant_id);
    if (ids.length > 0) await client.query("DELETE FROM oauth_store WHERE grant_id = ANY($1::text[])", [ids]);
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
  const ended = await revokeWhere(pool, "grant_id = $1", [grantId], publish);
  // A grant without a live connection (never consented to completion): its tokens still go.
  if (ended.length === 0) {
    await pool.query("DELETE FROM oauth_store WHERE grant_id = $1", [grantId]);
    await publish(grantRevocation(grantId));
  }
}

/** Disconnects one app (dashboard, "Connected apps"): its tokens fail on the next request. */
export async function disconnect(
  pool: pg.Pool,
  input: { workspace: string; id: string },
  publish: (message: string) => Promise<void>,
): Promise<void> {
  const ended = await revokeWhere(pool, "workspace_id = $1 AND id = $2", [input.workspace, input.id], publish);
  if (ended.length === 0) throw notFound(`connection '${input.id}'`);
}

/**
 * A user leaves a workspace (removed by an admin, or of their own accord): the membership goes
 * and so do the connections that user made there, with every token of them.
 */
export async function removeMember(
  pool: pg.Pool,
  input: { workspace: string; user: string },
  publish: (message: string) => Promise<void>,
): Promise<{ connections: number }> {
  const params = [input.workspace, input.user];
  const member = await pool.query("SELECT 1 FROM members WHERE workspace_id = $1 AND user_id = $2", params);
  if (member.rowCount === 0) throw notFound(`member '${input.user}'`);
  // Tokens first: should the rest fail, access has ended all the same.
  const ended = await revokeWhere(pool, "workspace_id = $1 AND user_id = $2", params, publish);
  await pool.query("DELETE FROM members WHERE workspace_id = $1 AND user_id = $2", params);
  return { connections: ended.length };
}
