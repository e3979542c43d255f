import { notFound, ServiceError } from "@prim/engine";
import type { KeyBudget, KeyRevoked, MintedKey, MintedKeyInfo } from "@prim/wire";
import type pg from "pg";
import { newApiKey } from "./api-key.js";
import { amountOf, type KeyBudgets } from "./key-budgets.js";
import { checkBudget, checkExpiry, checkIpAllow, ipAllowWithin } from "./key-limits.js";
import { childDepth, narrowBudget, narrowKey, wider } from "./key-narrowing.js";
import { lockWorkspace, revokeSubtree } from "./key-revocation.js";
import { checkTools, findGroup, type KeyListed } from "./keys.js";
import { auditedTransaction } from "./workspace-audit.js";

/**
 * Minted keys (issue 41, item 2; CLOUD.md, Credentials): any key mints children at most as wide
 * as itself (`key-narrowing.ts`), lists what it minted and their descendants, and revokes any
 * of those with its whole subtree. A key sees only its own subtree: another key's id answers
 * 404 `not_found`, as a missing one does.
 */

export interface MintInput {
  /** The caller's key id (its principal's actor `key:<id>`). */
  parent: string;
  workspace: string;
  name?: string;
  /** A group name or id; null = every group; omitted = the parent's. */
  group?: string | null;
  tools?: string[];
  readOnly?: boolean;
  /** Ms since the epoch, no later than the parent's; omitted = the parent's. */
  expiresAt?: number;
  /** CIDRs, each inside one of the parent's; omitted = the parent's. */
  ipAllow?: string[];
  /** Operations it may spend: under a budgeted parent, carved out of the parent's (required). */
  budget?: KeyBudget;
}

interface ParentRow {
  group_id: string | null;
  group_name: string | null;
  tools: string[] | null;
  read_only: boolean;
  depth: number;
  revoked_at: Date | null;
  expires_at: Date | null;
  ip_allow: string[] | null;
  budget: KeyBudget | null;
}

const revokedCaller = () =>
  new ServiceError("invalid_token", "the credential is missing, malformed, unknown or revoked");

/**
 * Mints a child of `input.parent`, recorded as `key.mint` (by id and start) with the child.
 * `budgets` (the limits' Redis; absent with limits off, where no budget is counted) carves a
 * child's budget out of a budgeted parent's remaining one.
 */
export async function mintKey(pool: pg.Pool, input: MintInput, budgets?: KeyBudgets): Promise<MintedKey> {
  if (input.tools !== undefined) checkTools(input.tools);
  const askedBudget = input.budget === undefined ? undefined : checkBudget(input.budget);
  const askedExpiry = input.expiresAt === undefined ? undefined : checkExpiry(input.expiresAt);
  const askedIps = input.ipAllow === undefined ? undefined : checkIpAllow(input.ipAllow);
  const key = newApiKey(input.workspace);
  let undoCarve: (() => Promise<void>) | undefined;
  try {
    return await mintTransaction();
  } catch (error) {
    await undoCarve?.();
    throw error;
  }
  async function mintTransaction() {
    return auditedTransaction(pool, async (client, record) => {
      await lockWorkspace(client, input.workspace);
      // The parent's row is locked: a revocation of it waits for this mint, or this mint for it.
      const { rows } = await client.query<ParentRow>(
        `SELECT k.group_id, g.name AS group_name, k.tools, k.read_only, k.depth, k.revoked_at,
              k.expires_at, k.ip_allow, k.budget
         FROM api_keys k LEFT JOIN groups g ON g.id = k.group_id
        WHERE k.id = $1 AND k.workspace_id = $2 FOR UPDATE OF k`,
        [input.parent, input.workspace],
      );
      const parent = rows[0];
      if (parent === undefined || parent.revoked_at !== null) throw revokedCaller();
      const depth = childDepth(parent.depth);
      const budget = narrowBudget(parent.budget, askedBudget);
      // Expiry and IP allowlist: the parent's unless the child asks for less, never more.
      const parentExpiry = parent.expires_at?.getTime() ?? null;
      if (askedExpiry !== undefined && parentExpiry !== null && askedExpiry > parentExpiry) {
        throw wider("expires_at", `the parent expires at ${new Date(parentExpiry).toISOString()}`);
      }
      const expiresAt = askedExpiry ?? parentExpiry;
      if (askedIps !== undefined && parent.ip_allow !== null && !ipAllowWithin(parent.ip_allow, askedIps)) {
        throw wider("ip_allow", `each CIDR must lie inside one of the parent's: ${parent.ip_allow.join(", ")}`);
      }
      const ipAllow = askedIps ?? parent.ip_allow;
      // A one-group parent names only its own group (another name is refused without a lookup).
      let asked: { id: string; name: string } | null | undefined;
      if (input.group === undefined || input.group === null) asked = input.group;
      else if (parent.group_id === null) asked = await findGroup(client, input.workspace, input.group);
      else if (input.group === parent.group_id || input.group === parent.group_name) {
        asked = { id: parent.group_id, name: parent.group_name ?? input.group };
      } else throw wider("group", "the parent reaches one group only");
      const scope = narrowKey(
        { groupId: parent.group_id, tools: parent.tools, readOnly: parent.read_only },
        {
          groupId: asked === undefined ? undefined : (asked?.id ?? null),
          tools: input.tools,
          readOnly: input.readOnly,
        },
      );
      const groupName = scope.groupId === null ? null : (asked?.name ?? parent.group_name);
      // Last, once every other rule has passed: the parent gives the child's budget up (undone
      // should the transaction fail after it).
      if (parent.budget !== null && budget !== null && budgets !== undefined) {
        undoCarve = await budgets.reserve(
          input.workspace,
          { id: input.parent, budget: parent.budget },
          amountOf(budget),
        );
      }
      const inserted = await client.query<{ created_at: Date }>(
        // The child keeps the parent's expiry and IP allowlist: never wider on either.
        `INSERT INTO api_keys (id, hash, start, workspace_id, group_id, tools, read_only, name, created_by, parent_id, depth,
                             expires_at, ip_allow, budget)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING created_at`,
        [
          key.id,
          key.hash,
          key.start,
          input.workspace,
          scope.groupId,
          scope.tools === null ? null : JSON.stringify(scope.tools),
          scope.readOnly,
          input.name ?? null,
          `key:${input.parent}`,
          input.parent,
          depth,
          expiresAt === null ? null : new Date(expiresAt),
          ipAllow === null ? null : JSON.stringify(ipAllow),
          budget === null ? null : JSON.stringify(budget),
        ],
      );
      const minted = {
        id: key.id,
        key: key.key,
        name: input.name ?? null,
        group: groupName,
        tools: scope.tools,
        read_only: scope.readOnly,
        expires_at: expiresAt,
        ip_allow: ipAllow,
        budget,
        parent: input.parent,
        created_at: (inserted.rows[0] as { created_at: Date }).created_at.getTime(),
      };
      await record(input.workspace, {
        actor: `key:${input.parent}`,
        action: "key.mint",
        target: key.id,
        detail: {
          start: key.start,
          name: minted.name,
          group: minted.group,
          tools: minted.tools,
          read_only: minted.read_only,
          ...(expiresAt === null ? {} : { expires_at: expiresAt }),
          ...(ipAllow === null ? {} : { ip_allow: ipAllow }),
          ...(budget === null ? {} : { budget }),
          parent: input.parent,
        },
      });
      return minted;
    });
  }
}

const SUBTREE = `WITH RECURSIVE sub AS (
    SELECT id FROM api_keys WHERE parent_id = $1
    UNION SELECT k.id FROM api_keys k JOIN sub ON k.parent_id = sub.id)`;

/** The keys `caller` minted and their descendants, oldest first (revoked ones too, marked). */
export async function listMintedKeys(pool: pg.Pool, caller: string): Promise<MintedKeyInfo[]> {
  // The dashboard's listed key (`listKeys`) without its creator, with its place in the tree.
  const { rows } = await pool.query<
    Omit<KeyListed, "created_by" | "created_by_email"> & { parent: string; depth: number }
  >(
    `${SUBTREE}
     SELECT k.id, k.start, k.name, g.name AS group, k.tools, k.read_only, k.expires_at, k.ip_allow, k.budget,
            k.parent_id AS parent, k.depth,
            k.created_at, k.last_used_at, k.revoked_at
       FROM sub JOIN api_keys k ON k.id = sub.id LEFT JOIN groups g ON g.id = k.group_id
      ORDER BY k.depth, k.created_at, k.id`,
    [caller],
  );
  return rows.map((row) => ({
    ...row,
    expires_at: row.expires_at?.getTime() ?? null,
    created_at: row.created_at.getTime(),
    last_used_at: row.last_used_at?.getTime() ?? null,
    revoked_at: row.revoked_at?.getTime() ?? null,
  }));
}

/**
 * `DELETE /v1/keys/{id}`: revokes `id` and its subtree when `id` is under `caller`, else 404
 * (a key outside the caller's subtree is not revealed). `publish` tells every process; `budgets`
 * gives a budgeted key's unspent reservation back to its parent.
 */
export async function revokeMintedKey(
  pool: pg.Pool,
  input: { caller: string; workspace: string; id: string },
  publish: (hash: string) => Promise<void>,
  budgets?: KeyBudgets,
): Promise<KeyRevoked> {
  const done = await auditedTransaction(pool, async (client, record) => {
    await lockWorkspace(client, input.workspace);
    const under = await client.query<{
      revoked_at: Date | null;
      budget: KeyBudget | null;
      parent_id: string;
      parent_budget: KeyBudget | null;
    }>(
      `${SUBTREE}
       SELECT k.revoked_at, k.budget, k.parent_id, p.budget AS parent_budget
         FROM sub JOIN api_keys k ON k.id = sub.id JOIN api_keys p ON p.id = k.parent_id
        WHERE k.id = $2 AND k.workspace_id = $3 FOR UPDATE OF k`,
      [input.caller, input.id, input.workspace],
    );
    const row = under.rows[0];
    if (row === undefined) throw notFound(`key '${input.id}'`);
    const revoked = await revokeSubtree(client, record, {
      workspace: input.workspace,
      root: input.id,
      actor: `key:${input.caller}`,
    });
    const at = await client.query<{ revoked_at: Date }>("SELECT revoked_at FROM api_keys WHERE id = $1", [input.id]);
    return { ...revoked, row, revokedAt: (at.rows[0] as { revoked_at: Date }).revoked_at };
  });
  await Promise.all(done.hashes.map((hash) => publish(hash)));
  const { row } = done;
  // Only the first revocation gives back (a repeated DELETE finds it revoked already).
  if (row.revoked_at === null && row.budget !== null && row.parent_budget !== null) {
    await budgets?.release(
      input.workspace,
      { id: row.parent_id, budget: row.parent_budget },
      { id: input.id, budget: row.budget },
    );
  }
  return { id: input.id, revoked_at: done.revokedAt.getTime(), revoked: done.ids };
}
