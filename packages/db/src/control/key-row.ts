import type { KeyBudget, Principal } from "@prim/engine";

/** The key row a credential resolves to (api_keys joined with what a request needs). */
export interface KeyRow {
  id: string;
  workspace_id: string;
  group_id: string | null;
  tools: string[] | null;
  read_only: boolean;
  expires_at: Date | null;
  ip_allow: string[] | null;
  budget: KeyBudget | null;
  workspace_name: string;
  /** The keys above a minted key, its parent first (empty for a key nobody minted). */
  parents: string[];
}

/**
 * The columns of `KeyRow` from `api_keys k JOIN workspaces w` (the resolver's and the attenuated
 * tokens' one query shape): the parent chain walked up by `parent_id`, at most 8 steps.
 */
export const KEY_ROW_COLUMNS = `k.id, k.workspace_id, k.group_id, k.tools, k.read_only, k.expires_at, k.ip_allow,
  k.budget, w.name AS workspace_name,
  ARRAY(WITH RECURSIVE up AS (
          SELECT k.parent_id AS id, 1 AS n
          UNION ALL SELECT a.parent_id, up.n + 1 FROM api_keys a JOIN up ON a.id = up.id WHERE a.parent_id IS NOT NULL)
        SELECT id FROM up WHERE id IS NOT NULL ORDER BY n) AS parents`;

/** A key row's principal, before any attenuation. */
export function principalOf(row: Omit<KeyRow, "expires_at" | "ip_allow">): Principal {
  return {
    // A key with every group and every tool is a workspace key; anything narrower is scoped.
    kind: row.group_id === null && row.tools === null ? "account" : "scoped",
    workspace: row.workspace_id,
    actor: `key:${row.id}`,
    groupId: row.group_id,
    tools: row.tools,
    workspaceName: row.workspace_name,
    // Read-only is its own property, beside the kind: a read-only key with every group and
    // tool is still the workspace's (it lists and reads every group) but writes nothing.
    ...(row.read_only ? { readOnly: true } : {}),
    // Counted by the limiter in the rate limit's own script (apps/api limits).
    ...(row.budget === null ? {} : { budget: row.budget }),
    // Named in the audit entries of its calls, beside the actor.
    ...(row.parents.length === 0 ? {} : { parents: row.parents }),
  };
}
