import { invalid, isValidName, notFound, prefixedId } from "@prim/engine";
import type pg from "pg";
import { placeWorkspace } from "../cells/placements.js";
import { inTransaction } from "../connect.js";
import { newApiKey } from "./api-key.js";

/** The operator's commands (CLOUD.md: `prim admin … --json`), each answering one JSON object. */

export const PLANS = ["starter", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export interface WorkspaceCreated {
  workspace: { id: string; name: string; plan: Plan };
  /** A workspace key (every group, every tool), shown once. */
  key: string;
  key_id: string;
}

function checkPlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw invalid(`plan: must be one of ${PLANS.join(", ")}`);
  return plan as Plan;
}

function checkRate(plan: Plan, rps: number | undefined, burst: number | undefined): void {
  if ((rps !== undefined || burst !== undefined) && plan !== "enterprise") {
    throw invalid("--rps and --burst apply to enterprise workspaces only");
  }
  for (const [name, v] of [
    ["rps", rps],
    ["burst", burst],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw invalid(`${name}: must be a positive integer`);
  }
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
};

/** A workspace and, unless `key: false`, its workspace key (shown once). */
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
  const key = newApiKey();
  await inTransaction(pool, async (client) => {
    await client.query("INSERT INTO workspaces (id, name, plan, rps, burst) VALUES ($1, $2, $3, $4, $5)", [
      id,
      input.name,
      plan,
      input.rps ?? null,
      input.burst ?? null,
    ]);
    if (input.owner !== undefined || input.ownerId !== undefined) {
      const user = await client.query<{ id: string }>("SELECT id FROM users WHERE email = $1 OR id = $2", [
        input.owner ?? null,
        input.ownerId ?? null,
      ]);
      if (user.rows[0] === undefined) throw notFound(`user '${input.owner ?? input.ownerId}'`);
      await client.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [
        id,
        user.rows[0].id,
      ]);
    }
    // The least-loaded open cell serves it (none open yet: the first cell it reaches claims it).
    await placeWorkspace(client, id);
    if (input.key === false) return;
    await client.query(
      "INSERT INTO api_keys (id, hash, start, workspace_id, name, created_by) VALUES ($1, $2, $3, $4, $5, 'admin')",
      [key.id, key.hash, key.start, id, "workspace key"],
    );
  });
  if (input.key === false) return { workspace: { id, name: input.name, plan } };
  return { workspace: { id, name: input.name, plan }, key: key.key, key_id: key.id };
}

export interface KeyCreated {
  id: string;
  key: string;
  /** The group's name, or null for every group. */
  group: string | null;
  tools: string[] | null;
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
  pool: pg.Pool,
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

export async function createKey(
  pool: pg.Pool,
  input: { workspace: string; group?: string; tools?: string[]; name?: string; createdBy?: string },
): Promise<KeyCreated> {
  const ws = await pool.query("SELECT 1 FROM workspaces WHERE id = $1", [input.workspace]);
  if (ws.rowCount === 0) throw notFound(`workspace '${input.workspace}'`);
  const group = input.group === undefined ? null : await findGroup(pool, input.workspace, input.group);
  const tools = input.tools ?? null;
  checkTools(tools ?? []);
  const key = newApiKey();
  await pool.query(
    `INSERT INTO api_keys (id, hash, start, workspace_id, group_id, tools, name, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      key.id,
      key.hash,
      key.start,
      input.workspace,
      group?.id ?? null,
      tools === null ? null : JSON.stringify(tools),
      input.name ?? null,
      input.createdBy ?? "admin",
    ],
  );
  return { id: key.id, key: key.key, group: group?.name ?? null, tools };
}

/**
 * Revokes a key (of `workspace` only, when given: the dashboard); `publish` tells every process
 * to drop it (the next request answers 401).
 */
export async function revokeKey(
  pool: pg.Pool,
  id: string,
  publish: (hash: string) => Promise<void>,
  workspace?: string,
): Promise<{ id: string; revoked_at: number }> {
  const { rows } = await pool.query<{ hash: string; revoked_at: Date }>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE id = $1 AND ($2::text IS NULL OR workspace_id = $2) RETURNING hash, revoked_at`,
    [id, workspace ?? null],
  );
  if (rows[0] === undefined) throw notFound(`key '${id}'`);
  await publish(rows[0].hash);
  return { id, revoked_at: rows[0].revoked_at.getTime() };
}

/** Sets a workspace's plan (and, for Enterprise, its custom per-key rate). */
export async function setPlan(
  pool: pg.Pool,
  input: { workspace: string; plan: string; rps?: number; burst?: number },
  /** Tells the limiter (Redis) that the plan changed: it applies to the very next request. */
  changed: (workspace: string) => Promise<void> = async () => {},
): Promise<{ workspace: { id: string; name: string; plan: Plan; rps: number | null; burst: number | null } }> {
  const plan = checkPlan(input.plan);
  checkRate(plan, input.rps, input.burst);
  const { rows } = await pool.query<{ id: string; name: string; rps: number | null; burst: number | null }>(
    "UPDATE workspaces SET plan = $2, rps = $3, burst = $4 WHERE id = $1 RETURNING id, name, rps, burst",
    [input.workspace, plan, input.rps ?? null, input.burst ?? null],
  );
  if (rows[0] === undefined) throw notFound(`workspace '${input.workspace}'`);
  await changed(input.workspace);
  return { workspace: { ...rows[0], plan } };
}
