import type pg from "pg";

/** A workspace at a glance (the dashboard's Overview): what it holds and what reaches it. */
export interface WorkspaceCounts {
  groups: number;
  primitives: number;
  /** Keys not revoked. */
  keys: number;
  /** Keys not revoked that have made a call. */
  keys_used: number;
  /** OAuth connections (MCP clients) not disconnected. */
  connections: number;
}

/** The counts of a workspace in one query. */
export async function workspaceCounts(pool: pg.Pool, workspace: string): Promise<WorkspaceCounts> {
  const { rows } = await pool.query<Record<keyof WorkspaceCounts, string>>(
    `SELECT (SELECT count(*) FROM groups WHERE workspace_id = $1) AS groups,
            (SELECT count(*) FROM primitives WHERE workspace_id = $1) AS primitives,
            (SELECT count(*) FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL) AS keys,
            (SELECT count(*) FROM api_keys
              WHERE workspace_id = $1 AND revoked_at IS NULL AND last_used_at IS NOT NULL) AS keys_used,
            (SELECT count(*) FROM oauth_connections WHERE workspace_id = $1 AND revoked_at IS NULL) AS connections`,
    [workspace],
  );
  const row = rows[0] as Record<keyof WorkspaceCounts, string>;
  return {
    groups: Number(row.groups),
    primitives: Number(row.primitives),
    keys: Number(row.keys),
    keys_used: Number(row.keys_used),
    connections: Number(row.connections),
  };
}
