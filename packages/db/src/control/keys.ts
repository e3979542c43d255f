import { invalid, isValidName, type KeyBudget, notFound } from "@prim/engine";
import type pg from "pg";
import { newApiKey } from "./api-key.js";
import { checkBudget, checkExpiry, checkIpAllow } from "./key-limits.js";
import { lockWorkspace, revokeSubtree } from "./key-revocation.js";
import { type Actor, auditedTransaction } from "./workspace-audit.js";

/**
 * API keys (CLOUD.md, Credentials): made by the operator (`prim admin key create`) or in the
 * dashboard, shown once and stored as their sha256; each creation and revocation is audited
 * (`key.create`, `key.revoke`) with the key's id and `start`, never the key.
 */

export interface KeyCreated {
  id: string;
  key: string;
  /** The group's name, or null for every group. */
  group: string | null;
  tools: string[] | null;
  /** Read-only: `engine.invoke` refuses its every writing call. */
  read_only: boolean;
  /** When it stops working (ms since the epoch), or null for never. */
  expires_at: number | null;
  /** The CIDRs its client address must fall in, or null for any address. */
  ip_allow: string[] | null;
  /** The operations it may spend, or null for no budget. */
  budget: KeyBudget | null;
}

/** A key's limits besides its scope, as `createKey` takes them (each optional). */
export interface KeyLimits {
  /** Ms since the epoch; must be ahead of now. */
  expiresAt?: number;
  ipAllow?: string[];
  budget?: KeyBudget;
}

const TOOL_PATTERN = /^[a-z_*]{1,64}$/;

/** Tool names or patterns (`db_query`, `fs_*`), else 400 `invalid_request`. */
export function checkTools(tools: readonly string[]): void {
  for (const tool of tools) {
    if (!TOOL_PATTERN.test(tool)) throw invalid(`tools: '${tool}' is not a tool name or pattern (a-z, _ and *)`);
  }
}

/** A group of the workspace by name or id, else 404 `not_found` (another workspace's is not found). */
export async function findGroup(
  pool: Pick<pg.Pool, "query">,
  workspace: string,
  group: string,
): Promise<{ id: string; name: string }> {
  if (!isValidName(group) && !group.startsWith("grp_")) throw invalid("group: not a group name or id");
  const found = await pool.query<{ id: string; name: string }>(
    "SELECT id, name FROM groups WHERE workspace_id = $1 AND (id = $2 OR name = $2)",
    [workspace, group],
  );
  const row = found.rows[0];
  if (row === undefined) throw notFound(`group '${group}'`);
  return row;
}

/** A key of `workspace`, made by `createdBy` (the actor: `admin` or `user:<id>`). */
export async function createKey(
  pool: pg.Pool,
  input: {
    workspace: string;
    group?: string;
    tools?: string[];
    name?: string;
    readOnly?: boolean;
    createdBy?: Actor;
  } & KeyLimits,
): Promise<KeyCreated> {
  const tools = input.tools ?? null;
  const readOnly = input.readOnly === true;
  checkTools(tools ?? []);
  const expiresAt = input.expiresAt === undefined ? null : checkExpiry(input.expiresAt);
  const ipAllow = input.ipAllow === undefined ? null : checkIpAllow(input.ipAllow);
  const budget = input.budget === undefined ? null : checkBudget(input.budget);
  const actor = input.createdBy ?? "admin";
  const key = newApiKey(input.workspace);
  const group = await auditedTransaction(pool, async (client, record) => {
    const ws = await client.query("SELECT 1 FROM workspaces WHERE id = $1", [input.workspace]);
    if (ws.rowCount === 0) throw notFound(`workspace '${input.workspace}'`);
    const group = input.group === undefined ? null : await findGroup(client, input.workspace, input.group);
    await client.query(
      `INSERT INTO api_keys (id, hash, start, workspace_id, group_id, tools, read_only, name, created_by,
                             expires_at, ip_allow, budget)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        key.id,
        key.hash,
        key.start,
        input.workspace,
        group?.id ?? null,
        tools === null ? null : JSON.stringify(tools),
        readOnly,
        input.name ?? null,
        actor,
        expiresAt === null ? null : new Date(expiresAt),
        ipAllow === null ? null : JSON.stringify(ipAllow),
        budget === null ? null : JSON.stringify(budget),
      ],
    );
    await record(input.workspace, {
      actor,
      action: "key.create",
      target: key.id,
      detail: {
        start: key.start,
        name: input.name ?? null,
        group: group?.name ?? null,
        tools,
        read_only: readOnly,
        ...(expiresAt === null ? {} : { expires_at: expiresAt }),
        ...(ipAllow === null ? {} : { ip_allow: ipAllow }),
        ...(budget === null ? {} : { budget }),
      },
    });
    return group;
  });
  return {
    id: key.id,
    key: key.key,
    group: group?.name ?? null,
    tools,
    read_only: readOnly,
    expires_at: expiresAt,
    ip_allow: ipAllow,
    budget,
  };
}

/**
 * Revokes a key (of `workspace` only, when given: the dashboard) and every key minted under it
 * (`key-tree.ts`), each recorded as `key.revoke` the first time; `publish` tells every process
 * to drop each one (the next request answers 401).
 */
export async function revokeKey(
  pool: pg.Pool,
  id: string,
  publish: (hash: string) => Promise<void>,
  workspace?: string,
  actor: Actor = "admin",
): Promise<{ id: string; revoked_at: number }> {
  const done = await auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ workspace_id: string }>(
      "SELECT workspace_id FROM api_keys WHERE id = $1 AND ($2::text IS NULL OR workspace_id = $2)",
      [id, workspace ?? null],
    );
    const key = rows[0];
    if (key === undefined) throw notFound(`key '${id}'`);
    await lockWorkspace(client, key.workspace_id);
    const { hashes } = await revokeSubtree(client, record, { workspace: key.workspace_id, root: id, actor });
    const at = await client.query<{ revoked_at: Date }>("SELECT revoked_at FROM api_keys WHERE id = $1", [id]);
    return { hashes, revokedAt: (at.rows[0] as { revoked_at: Date }).revoked_at };
  });
  await Promise.all(done.hashes.map((hash) => publish(hash)));
  return { id, revoked_at: done.revokedAt.getTime() };
}

export interface KeyListed {
  id: string;
  start: string;
  name: string | null;
  group: string | null;
  tools: string[] | null;
  read_only: boolean;
  expires_at: Date | null;
  ip_allow: string[] | null;
  budget: KeyBudget | null;
  created_by: string | null;
  /** The creator's email when `created_by` is a user (`user:<id>`) who still exists, else null. */
  created_by_email: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/**
 * A workspace's keys (never their hashes), newest first, each with its creator's email when a
 * user made it (one query: the dashboard shows names, not `user:<id>`).
 */
export async function listKeys(pool: pg.Pool, workspace: string): Promise<KeyListed[]> {
  const { rows } = await pool.query<KeyListed>(
    `SELECT k.id, k.start, k.name, g.name AS group, k.tools, k.read_only, k.expires_at, k.ip_allow, k.budget,
            k.created_by, u.email AS created_by_email,
            k.created_at, k.last_used_at, k.revoked_at
       FROM api_keys k LEFT JOIN groups g ON g.id = k.group_id
       LEFT JOIN users u ON k.created_by LIKE 'user:%' AND u.id = substr(k.created_by, 6)
      WHERE k.workspace_id = $1 ORDER BY k.created_at DESC, k.id DESC`,
    [workspace],
  );
  return rows;
}
