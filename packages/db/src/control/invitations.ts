import { randomBytes } from "node:crypto";
import { invalid, notFound, prefixedId, ServiceError } from "@prim/engine";
import type pg from "pg";
import { base58, hashKey } from "./api-key.js";
import { addMember, checkRole, type Role } from "./members.js";
import { type Actor, auditedTransaction } from "./workspace-audit.js";

/** How long an invitation link stays good. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: number;
  expires_at: number;
}

/**
 * Invites `email` to a workspace with `role`: answers the link's token (shown to the inviter
 * once; only its sha256 is stored; the audit entry, `invitation.create`, names neither).
 * Someone already a member is 409 `already_exists`.
 */
export async function inviteMember(
  pool: pg.Pool,
  input: { workspace: string; email: string; role: string; invitedBy: Actor | string },
  now = Date.now(),
): Promise<Invitation & { token: string }> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw invalid("email: not an email address");
  const role = checkRole(input.role);
  const member = await pool.query(
    "SELECT 1 FROM members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND lower(u.email) = $2",
    [input.workspace, email],
  );
  if ((member.rowCount ?? 0) > 0) throw new ServiceError("already_exists", `${email} is already a member`);
  const token = `inv_${base58(randomBytes(24))}`;
  const id = prefixedId("inv").toLowerCase();
  const expires = new Date(now + INVITATION_TTL_MS);
  await auditedTransaction(pool, async (client, record) => {
    await client.query(
      `INSERT INTO invitations (id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [id, input.workspace, email, role, hashKey(token), input.invitedBy, new Date(now), expires],
    );
    await record(input.workspace, {
      actor: input.invitedBy,
      action: "invitation.create",
      target: id,
      detail: { email, role, expires_at: expires.getTime() },
    });
  });
  return {
    id,
    token,
    email,
    role,
    invited_by: input.invitedBy,
    created_at: now,
    expires_at: expires.getTime(),
  };
}

/** What an invitation link offers (its page), or 404 when expired, used, revoked or unknown. */
export async function describeInvitation(
  pool: pg.Pool,
  token: string,
): Promise<{ workspace: string; workspace_name: string; email: string; role: Role; expires_at: number }> {
  const { rows } = await pool.query<{
    workspace_id: string;
    name: string;
    email: string;
    role: Role;
    expires_at: Date;
  }>(
    `SELECT i.workspace_id, w.name, i.email, i.role, i.expires_at FROM invitations i
       JOIN workspaces w ON w.id = i.workspace_id
      WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()`,
    [hashKey(token)],
  );
  const row = rows[0];
  if (row === undefined) throw notFound("invitation");
  return {
    workspace: row.workspace_id,
    workspace_name: row.name,
    email: row.email,
    role: row.role,
    expires_at: row.expires_at.getTime(),
  };
}

/**
 * Accepts an invitation as the signed-in `user`, whose email must be the invited one and
 * verified (a forwarded link does not let someone else in). Used once; answers the workspace
 * joined. Recorded as `invitation.accept` and `member.add` by the user.
 */
export async function acceptInvitation(
  pool: pg.Pool,
  token: string,
  user: { id: string; email: string },
): Promise<{ workspace: string; role: Role }> {
  return auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ id: string; workspace_id: string; email: string; role: Role }>(
      `SELECT id, workspace_id, email, role FROM invitations
        WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now() FOR UPDATE`,
      [hashKey(token)],
    );
    const row = rows[0];
    if (row === undefined) throw notFound("invitation");
    if (row.email !== user.email.trim().toLowerCase()) {
      throw new ServiceError("forbidden", "this invitation is for another email address; sign in with that one");
    }
    // Holding the link is not enough: the address must be proven (issue 35), else anyone with a
    // forwarded link could sign up as the invitee and join.
    const verified = await client.query<{ email_verified: boolean }>("SELECT email_verified FROM users WHERE id = $1", [
      user.id,
    ]);
    if (verified.rows[0]?.email_verified !== true) {
      throw new ServiceError(
        "forbidden",
        "confirm your email address first: open the link in the mail we sent (signing in again sends a new one)",
      );
    }
    const actor = `user:${user.id}` as const;
    await client.query("UPDATE invitations SET accepted_at = now() WHERE id = $1", [row.id]);
    await record(row.workspace_id, {
      actor,
      action: "invitation.accept",
      target: row.id,
      detail: { email: row.email, role: row.role },
    });
    await addMember(client, record, { workspace: row.workspace_id, user: user.id, role: row.role, actor, via: row.id });
    return { workspace: row.workspace_id, role: row.role };
  });
}

/** A workspace's pending invitations, newest first. */
export async function listInvitations(pool: pg.Pool, workspace: string): Promise<Invitation[]> {
  const { rows } = await pool.query<{
    id: string;
    email: string;
    role: Role;
    invited_by: string;
    created_at: Date;
    expires_at: Date;
  }>(
    `SELECT id, email, role, invited_by, created_at, expires_at FROM invitations
      WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
      ORDER BY created_at DESC, id DESC`,
    [workspace],
  );
  return rows.map((r) => ({ ...r, created_at: r.created_at.getTime(), expires_at: r.expires_at.getTime() }));
}

/** Withdraws a pending invitation of `workspace`, recorded as `invitation.withdraw`. */
export async function revokeInvitation(pool: pg.Pool, workspace: string, id: string, actor: Actor): Promise<void> {
  await auditedTransaction(pool, async (client, record) => {
    const { rows } = await client.query<{ email: string; role: Role }>(
      `UPDATE invitations SET revoked_at = now()
        WHERE workspace_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email, role`,
      [workspace, id],
    );
    const row = rows[0];
    if (row === undefined) throw notFound(`invitation '${id}'`);
    await record(workspace, { actor, action: "invitation.withdraw", target: id, detail: { ...row } });
  });
}
