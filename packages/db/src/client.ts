import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { PrismaClient } from "./generated/prisma/client.js";

/** A Prisma client over node-postgres (Prisma 7's driver adapter; no query engine binary). */
export function createPrismaClient(databaseUrl: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}

const clients = new WeakMap<pg.Pool, PrismaClient>();

/**
 * The Prisma client over an existing pool (the control plane's reads): one per pool, sharing
 * its connections, so a process holds one set of them whichever way it queries.
 */
export function prismaOf(pool: pg.Pool): PrismaClient {
  let client = clients.get(pool);
  if (client === undefined) {
    client = new PrismaClient({ adapter: new PrismaPg(pool) });
    clients.set(pool, client);
  }
  return client;
}

export type { PrismaClient };
