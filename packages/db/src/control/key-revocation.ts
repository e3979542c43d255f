import type pg from "pg";
import type { Actor, RecordAudit } from "./workspace-audit.js";

/**
 * Revocation of a key with its subtree (`revokeKey`, the dashboard's and the operator's; and
 * `revokeMintedKey`, `DELETE /v1/keys/{id}`), and the lock every mint and revocation takes first.
 */

/**
 * Taken first by every mint and revocation: the workspace row, in the weakest mode, which only
 * changes to the workspace row itself wait for — among them its closing (`FOR UPDATE`, which
 * then revokes every key). One lock order, workspace then keys, so a closing and a mint neither
 * deadlock nor leave a child minted past the closing.
 */
export async function lockWorkspace(client: pg.ClientBase, workspace: string): Promise<void> {
  await client.query("SELECT 1 FROM workspaces WHERE id = $1 FOR KEY SHARE", [workspace]);
}

/**
 * Revokes `root` and every key under it, in the caller's transaction, one `key.revoke` entry
 * each; answers the hashes newly revoked (to publish). Repeated until nothing new is found: a
 * mint under a key of the subtree that held its parent's lock while an update waited commits a
 * child the next round sees, and a mint that waits for this transaction finds its parent revoked.
 */
export async function revokeSubtree(
  client: pg.ClientBase,
  record: RecordAudit,
  input: { workspace: string; root: string; actor: Actor },
): Promise<{ hashes: string[]; ids: string[] }> {
  const hashes: string[] = [];
  const ids: string[] = [];
  for (;;) {
    const { rows } = await client.query<{ id: string; hash: string; start: string }>(
      `WITH RECURSIVE tree AS (
           SELECT id FROM api_keys WHERE id = $1
           UNION SELECT k.id FROM api_keys k JOIN tree ON k.parent_id = tree.id)
       UPDATE api_keys SET revoked_at = now()
        WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL
        RETURNING id, hash, start`,
      [input.root],
    );
    if (rows.length === 0) return { hashes, ids };
    // Oldest first (ids sort by time): the revoked key before its descendants.
    rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const row of rows) {
      hashes.push(row.hash);
      ids.push(row.id);
      const detail = row.id === input.root ? { start: row.start } : { start: row.start, via: input.root };
      await record(input.workspace, { actor: input.actor, action: "key.revoke", target: row.id, detail });
    }
  }
}
