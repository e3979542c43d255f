import { invalid, notFound, prefixedId } from "@prim/engine";
import type pg from "pg";
import { placeWorkspace } from "../cells/placements.js";
import { prismaOf } from "../client.js";
import { newApiKey } from "./api-key.js";
import type { Role } from "./members.js";
import { checkPlan, checkRate, type Plan } from "./plans.js";
import { type Actor, auditedTransaction } from "./workspace-audit.js";

/** Workspaces: made by the operator (`prim admin workspace create`) or a dashboard user, renamed. */

export interface WorkspaceCreated {
  workspace: { id: string; name: string; plan: Plan };
  /** A workspace key (every group, every tool), shown once. */
  key: string;
  key_id: string;
}

type WorkspaceInput = {
  name: string;
  plan?: string;
  /** The owner's email (`prim admin`); `ownerId` names the user by id (the dashboard). */
  owner?: string;
  ownerId?: string;
  rps?: number;
  burst?: number;
  /** false: no workspace key is made (the dashboard's workspaces get keys when asked). */
  key?: boolean;
  /** Who makes it: `admin` (the default) or the dashboard's `user:<id>`. */
  actor?: Actor;
};

/**
 * A workspace and, unless `key: false`, its workspace key (shown once); recorded as
 * `workspace.create` (and `key.create` for the key) in the same transaction.
 */
export async function createWorkspace(pool: pg.Pool, input: WorkspaceInput & { key?: true }): Promise<WorkspaceCreated>;
export async function createWorkspace(
  pool: pg.Pool,
  input: WorkspaceInput & { key: false },
): Promise<Pick<WorkspaceCreated, "workspace">>;
export async function createWorkspace(
  pool: pg.Pool,
  input: WorkspaceInput,
): Promise<WorkspaceCreated | Pick<WorkspaceCreated, "workspace">> {
  const plan = checkPlan(input.plan ?? "starter");
  checkRate(plan, input.rps, input.burst);
  if (input.name.trim() === "") throw invalid("name: required");
  const id = prefixedId("ws").toLowerCase();
  const key = newApiKey(id);
  const actor = input.actor ?? "admin";
  await auditedTransaction(pool, async (client, record) => {
    await client.query("INSERT INTO workspaces (id, name, plan, rps, burst) VALUES ($1, $2, $3, $4, $5)", [
      id,
      input.name,
      plan,
      input.rps ?? null,
      input.burst ?? null,
    ]);
    let owner: string | null = null;
    if (input.owner !== undefined || input.ownerId !== undefined) {
      const user = await client.query<{ id: string }>("SELECT id FROM users WHERE email = $1 OR id = $2", [
        input.owner ?? null,
        input.ownerId ?? null,
      ]);
      if (user.rows[0] === undefined) throw notFound(`user '${input.owner ?? input.ownerId}'`);
      owner = user.rows[0].id;
      await client.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [id, owner]);
    }
    // The least-loaded open cell serves it (none open yet: the first cell it reaches claims it).
    await placeWorkspace(client, id);
    await record(id, {
      actor,
      action: "workspace.create",
      target: id,
      detail: { name: input.name, plan, owner: owner === null ? null : `user:${owner}` },
    });
    if (input.key === false) return;
    await client.query(
      "INSERT INTO api_keys (id, hash, start, workspace_id, name, created_by) VALUES ($1, $2, $3, $4, $5, $6)",
      [key.id, key.hash, key.start, id, "workspace key", actor],
    );
    await record(id, {
      actor,
      action: "key.create",
      target: key.id,
      detail: { start: key.start, name: "workspace key", group: null, tools: null },
    });
  });
  if (input.key === false) return { workspace: { id, name: input.name, plan } };
  return { workspace: { id, name: input.name, plan }, key: key.key, key_id: key.id };
}

/** Renames a workspace, recorded as `workspace.rename` with the name before. */
export async function renameWorkspace(
  pool: pg.Pool,
  input: { workspace: string; name: string; actor: Actor },
): Promise<{ id: string; name: string }> {
  if (input.name.trim() === "") throw invalid("name: required");
  return auditedTransaction(pool, async (client, record) => {
    const before = await client.query<{ name: string }>("SELECT name FROM workspaces WHERE id = $1 FOR UPDATE", [
      input.workspace,
    ]);
    const was = before.rows[0]?.name;
    if (was === undefined) throw notFound(`workspace '${input.workspace}'`);
    await client.query("UPDATE workspaces SET name = $2 WHERE id = $1", [input.workspace, input.name]);
    await record(input.workspace, {
      actor: input.actor,
      action: "workspace.rename",
      target: input.workspace,
      detail: { from: was, to: input.name },
    });
    return { id: input.workspace, name: input.name };
  });
}

/** A workspace's name and plan, or null when there is none. */
export async function readWorkspace(
  pool: pg.Pool,
  workspace: string,
): Promise<{ id: string; name: string; plan: Plan } | null> {
  const row = await prismaOf(pool).workspace.findUnique({
    where: { id: workspace },
    select: { id: true, name: true, plan: true },
  });
  return row === null ? null : { ...row, plan: row.plan as Plan };
}

/** The workspaces `user` is a member of, with their role, by name. */
export async function workspacesOf(
  pool: pg.Pool,
  user: string,
): Promise<{ id: string; name: string; plan: Plan; role: Role }[]> {
  const rows = await prismaOf(pool).member.findMany({
    where: { userId: user },
    select: { role: true, workspace: { select: { id: true, name: true, plan: true } } },
    orderBy: [{ workspace: { name: "asc" } }, { workspace: { id: "asc" } }],
  });
  return rows.map((r) => ({ ...r.workspace, plan: r.workspace.plan as Plan, role: r.role as Role }));
}

/**
 * What the consent screen offers `user`: the workspaces where their role reaches data (not
 * `billing`) with their groups' names.
 */
export async function consentWorkspaces(
  pool: pg.Pool,
  user: string,
): Promise<{ id: string; name: string; role: Role; groups: string[] }[]> {
  const { rows } = await pool.query<{ id: string; name: string; role: Role; groups: string[] | null }>(
    `SELECT w.id, w.name, m.role,
            (SELECT array_agg(g.name ORDER BY g.name) FROM groups g WHERE g.workspace_id = w.id) AS groups
       FROM members m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.user_id = $1 AND m.role <> 'billing'
      ORDER BY w.name, w.id`,
    [user],
  );
  return rows.map((r) => ({ ...r, groups: r.groups ?? [] }));
}

/** A workspace's groups with how many primitives each holds, by name. */
export async function listGroups(
  pool: pg.Pool,
  workspace: string,
): Promise<{ id: string; name: string; primitives: number }[]> {
  const rows = await prismaOf(pool).group.findMany({
    where: { workspaceId: workspace },
    select: { id: true, name: true, _count: { select: { primitives: true } } },
    orderBy: { name: "asc" },
  });
  return rows.map((r) => ({ id: r.id, name: r.name, primitives: r._count.primitives }));
}

/** How many primitives a workspace holds (the usage page's figure against Starter's cap). */
export function countPrimitives(pool: pg.Pool, workspace: string): Promise<number> {
  return prismaOf(pool).primitive.count({ where: { workspaceId: workspace } });
}
