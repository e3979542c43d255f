import { notFound } from "@prim/engine";
import type pg from "pg";
import { prismaOf } from "../client.js";
import { membership, type Role } from "./members.js";
import { type Actor, auditedTransaction } from "./workspace-audit.js";

/**
 * "Allow secret export" (CLOUD.md, Credentials): whether group archives may carry a workspace's
 * vault values for a key other than its own. Off by default; owners switch it in the dashboard,
 * the operator with `prim admin workspace secret-export`; each switch is audited.
 */

export interface SecretExportSetting {
  workspace: { id: string; name: string; secret_export: boolean };
}

/**
 * The workspace's setting and, for a dashboard user, their role in it (null: not a member, or
 * no user asked about); null when the workspace does not exist.
 */
export async function readSecretExport(
  pool: pg.Pool,
  workspace: string,
  userId: string | null = null,
): Promise<{ enabled: boolean; role: Role | null } | null> {
  const ws = await prismaOf(pool).workspace.findUnique({ where: { id: workspace }, select: { secretExport: true } });
  if (ws === null) return null;
  const role = userId === null ? null : ((await membership(pool, workspace, userId))?.role ?? null);
  return { enabled: ws.secretExport, role };
}

/**
 * Switches the setting and records `secret_export.enable` or `.disable` for `actor` in the same
 * transaction (every call is recorded: each is someone's explicit decision). 404 for a workspace
 * that does not exist. Who may call it is the caller's check (owners only in the dashboard).
 */
export async function setSecretExport(
  pool: pg.Pool,
  input: { workspace: string; enabled: boolean; actor: Actor | string },
  now: () => number = Date.now,
): Promise<SecretExportSetting> {
  return auditedTransaction(
    pool,
    async (client, record) => {
      const before = await client.query<{ name: string; secret_export: boolean }>(
        "SELECT name, secret_export FROM workspaces WHERE id = $1 FOR UPDATE",
        [input.workspace],
      );
      const row = before.rows[0];
      if (row === undefined) throw notFound(`workspace '${input.workspace}'`);
      await client.query("UPDATE workspaces SET secret_export = $2 WHERE id = $1", [input.workspace, input.enabled]);
      await record(input.workspace, {
        actor: input.actor,
        action: input.enabled ? "secret_export.enable" : "secret_export.disable",
        target: input.workspace,
        detail: { was: row.secret_export },
      });
      return { workspace: { id: input.workspace, name: row.name, secret_export: input.enabled } };
    },
    now,
  );
}
