import { invalid, notFound, ServiceError } from "@prim/engine";
import type pg from "pg";
import { prismaOf } from "../client.js";
import { endConnectionsOf } from "../oauth/connections.js";
import type { Plan } from "./plans.js";
import { type Actor, auditedTransaction, type RecordAudit } from "./workspace-audit.js";

/** A member's role in a workspace (CLOUD.md, Credentials). */
export const ROLES = ["owner", "admin", "member", "billing"] as const;
export type Role = (typeof ROLES)[number];

export function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw invalid(`role: must be one of ${ROLES.join(", ")}`);
  return role as Role;
}

export interface Membership {
  role: Role;
  /** The workspace's name and plan. */
  name: string;
  plan: Plan;
}

/**
 * The membership check: `user`'s role in `workspace` with the workspace's name and plan, or
 * null when not a member (every dashboard page and procedure asks this).
 */
export async function membership(pool: pg.Pool, workspace: string, user: string): Promise<Membership | null> {
  const row = await prismaOf(pool).member.findUnique({
    where: { workspaceId_userId: { workspaceId: workspace, userId: user } },
    select: { role: true, workspace: { select: { name: true, plan: true } } },
  });
  return row === null ? null : { role: row.role as Role, name: row.workspace.name, plan: row.workspace.plan as Plan };
}

/** A workspace's members with their role, by email. */
export async function listMembers(
  pool: pg.Pool,
  workspace: string,
): Promise<{ id: string; email: string; name: string; role: Role }[]> {
  const rows = await prismaOf(pool).member.findMany({
    where: { workspaceId: workspace },
    select: { role: true, user: { select: { id: true, email: true, name: true } } },
    orderBy: { user: { email: "asc" } },
  });
  return rows.map((r) => ({ ...r.user, role: r.role as Role }));
}

/** How many owners a workspace has (the last one may not leave). */
export function countOwners(pool: pg.Pool, workspace: string): Promise<number> {
  return prismaOf(pool).member.count({ where: { workspaceId: workspace, role: "owner" } });
}

/**
 * Adds `user` to `workspace` with `role` inside the caller's audited transaction, recorded as
 * `member.add`; false (and nothing recorded) when already a member.
 */
export async function addMember(
  client: pg.ClientBase,
  record: RecordAudit,
  input: { workspace: string; user: string; role: Role; actor: Actor; via?: string },
): Promise<boolean> {
  const { rowCount } = await client.query(
    "INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
    [input.workspace, input.user, input.role],
  );
  if ((rowCount ?? 0) === 0) return false;
  await record(input.workspace, {
    actor: input.actor,
    action: "member.add",
    target: `user:${input.user}`,
    detail: { role: input.role, ...(input.via === undefined ? {} : { via: input.via }) },
  });
  return true;
}

/**
 * A user leaves a workspace (removed by an admin, or of their own accord): the connections that
 * user made there end first, with every token of them (each `oauth.disconnect`), then the
 * membership goes (`member.remove`, with its role and how many connections ended).
 */
export async function removeMember(
  pool: pg.Pool,
  input: { workspace: string; user: string; actor?: Actor },
  publish: (message: string) => Promise<void>,
): Promise<{ connections: number }> {
  const actor = input.actor ?? "admin";
  if ((await membership(pool, input.workspace, input.user)) === null) throw notFound(`member '${input.user}'`);
  // Tokens first: should the rest fail, access has ended all the same.
  const connections = await endConnectionsOf(pool, { ...input, actor }, publish);
  await auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ role: Role }>(
      "DELETE FROM members WHERE workspace_id = $1 AND user_id = $2 RETURNING role",
      [input.workspace, input.user],
    );
    const role = rows[0]?.role;
    if (role === undefined) return; // gone meanwhile (a second click): recorded once
    await record(input.workspace, {
      actor,
      action: "member.remove",
      target: `user:${input.user}`,
      detail: { role, connections },
    });
  });
  return { connections };
}

/**
 * Changes a member's role, recorded as `member.role` with the role before; the last owner keeps
 * theirs (409 `conflict`). Who may call it is the caller's check.
 */
export async function setMemberRole(
  pool: pg.Pool,
  input: { workspace: string; user: string; role: string; actor: Actor },
): Promise<{ user: string; role: Role }> {
  const role = checkRole(input.role);
  return auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ user_id: string; role: Role }>(
      "SELECT user_id, role FROM members WHERE workspace_id = $1 AND (role = 'owner' OR user_id = $2) FOR UPDATE",
      [input.workspace, input.user],
    );
    const was = rows.find((r) => r.user_id === input.user)?.role;
    if (was === undefined) throw notFound(`member '${input.user}'`);
    if (was === role) return { user: input.user, role };
    if (was === "owner" && rows.filter((r) => r.role === "owner").length === 1) {
      throw new ServiceError("conflict", "the last owner keeps the role; make another owner first");
    }
    await client.query("UPDATE members SET role = $3 WHERE workspace_id = $1 AND user_id = $2", [
      input.workspace,
      input.user,
      role,
    ]);
    await record(input.workspace, {
      actor: input.actor,
      action: "member.role",
      target: `user:${input.user}`,
      detail: { from: was, to: role },
    });
    return { user: input.user, role };
  });
}
