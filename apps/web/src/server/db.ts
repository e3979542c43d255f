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

export type Membership = import("@prim/db").Membership;

/** The user's role in a workspace with its name and plan, or null when not a member. */
export async function membership(workspace: string, userId: string): Promise<Membership | null> {
  return (await primDb()).membership(db(), workspace, userId);
}
