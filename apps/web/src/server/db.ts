import type { PrismaClient } from "@prim/db";
import pg from "pg";
import { webEnv } from "./env";
import { primDb } from "./prim";

let pool: pg.Pool | undefined;
let prisma: PrismaClient | undefined;

/** The control plane's pool (created on first use, one per server process). */
export function db(): pg.Pool {
  pool ??= new pg.Pool({ connectionString: webEnv().DATABASE_URL, max: 10, connectionTimeoutMillis: 5_000 });
  return pool;
}

/** The Prisma client the session library stores users and sessions with. */
export async function prismaClient(): Promise<PrismaClient> {
  prisma ??= (await primDb()).createPrismaClient(webEnv().DATABASE_URL);
  return prisma;
}

export interface Membership {
  name: string;
  plan: string;
  role: "owner" | "admin" | "member" | "billing";
}

/** The user's role in a workspace with its name and plan, or null when not a member. */
export async function membership(workspace: string, userId: string): Promise<Membership | null> {
  const { rows } = await db().query<Membership>(
    `SELECT w.name, w.plan, m.role FROM members m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.workspace_id = $1 AND m.user_id = $2`,
    [workspace, userId],
  );
  return rows[0] ?? null;
}
