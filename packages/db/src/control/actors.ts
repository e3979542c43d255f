import type pg from "pg";

/**
 * How an audit entry's `actor` reads on the dashboard: a user's email, a key's name with its
 * start (`pk_AbCdEfGh…`), an OAuth app with the user it acts for, or a word for the system's own
 * actors. `gone` marks a user no longer a member here, a revoked key or a disconnected app — the
 * entry still names them.
 */
export interface ActorName {
  kind: "user" | "key" | "oauth" | "system" | "unknown";
  /** The email, the key's name (or "Unnamed key"), the app's name, or the word. */
  label: string;
  /** The key's start (`pk_…`), or the email of the user an app acts for. */
  detail: string | null;
  gone: boolean;
}

/** The actors the system writes itself (CLOUD.md, "Audit of the control plane"; the engine's). */
const SYSTEM: Record<string, string> = {
  admin: "Operator (prim admin)",
  operator: "Operator",
  stripe: "Stripe",
  billing: "Billing",
  "signed-url": "Signed URL",
  local: "Local",
};

const split = (actors: readonly string[], prefix: string) =>
  actors.filter((a) => a.startsWith(prefix)).map((a) => a.slice(prefix.length));

/**
 * The names of a page's actors in one query (users by id, this workspace's keys and OAuth
 * connections by id), so a removed member, a revoked key or a disconnected app still reads as a
 * name, marked. An id that resolves to nothing (a deleted user) reads as what it is.
 */
export async function resolveActors(
  pool: pg.Pool,
  workspace: string,
  actors: readonly string[],
): Promise<Record<string, ActorName>> {
  const distinct = [...new Set(actors)];
  const users = split(distinct, "user:");
  const keys = split(distinct, "key:");
  const apps = split(distinct, "oauth:");
  const found = new Map<string, ActorName>();
  if (users.length + keys.length + apps.length > 0) {
    const { rows } = await pool.query<{
      actor: string;
      kind: "user" | "key" | "oauth";
      label: string | null;
      detail: string | null;
      gone: boolean;
    }>(
      `SELECT 'user:' || u.id AS actor, 'user' AS kind, u.email AS label, NULL AS detail,
              NOT EXISTS (SELECT 1 FROM members m WHERE m.workspace_id = $1 AND m.user_id = u.id) AS gone
         FROM users u WHERE u.id = ANY($2::text[])
       UNION ALL
       SELECT 'key:' || k.id, 'key', k.name, k.start, k.revoked_at IS NOT NULL
         FROM api_keys k WHERE k.workspace_id = $1 AND k.id = ANY($3::text[])
       UNION ALL
       SELECT 'oauth:' || c.id, 'oauth', coalesce(c.client_name, c.client_id), u.email, c.revoked_at IS NOT NULL
         FROM oauth_connections c JOIN users u ON u.id = c.user_id
         WHERE c.workspace_id = $1 AND c.id = ANY($4::text[])`,
      [workspace, users, keys, apps],
    );
    for (const r of rows) {
      found.set(r.actor, {
        kind: r.kind,
        label: r.label ?? (r.kind === "key" ? "Unnamed key" : r.actor),
        detail: r.kind === "key" && r.detail !== null ? `${r.detail}…` : r.detail,
        gone: r.gone,
      });
    }
  }
  const names: Record<string, ActorName> = {};
  for (const actor of distinct) {
    const system = SYSTEM[actor];
    names[actor] =
      found.get(actor) ??
      (system !== undefined ? { kind: "system", label: system, detail: null, gone: false } : gone(actor));
  }
  return names;
}

/** An actor whose row is gone (a deleted account or key), or one of no known kind. */
function gone(actor: string): ActorName {
  const kind = actor.split(":")[0];
  if (kind === "user") return { kind: "user", label: "Deleted user", detail: actor, gone: true };
  if (kind === "key") return { kind: "key", label: "Deleted key", detail: actor, gone: true };
  if (kind === "oauth") return { kind: "oauth", label: "Deleted app connection", detail: actor, gone: true };
  return { kind: "unknown", label: actor, detail: null, gone: false };
}
