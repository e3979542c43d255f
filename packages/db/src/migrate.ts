import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { connectionError, redact } from "./connect.js";

/** Where the package's migrations are (`prisma/migrations/<timestamp>_<name>/migration.sql`). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../prisma/migrations/", import.meta.url));

export interface MigrateOptions {
  databaseUrl: string;
  migrationsDir?: string;
  log?: (line: string) => void;
}

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

// Prisma's own bookkeeping table, so `prisma migrate status` (where it can run) reads the same.
const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

// One runner at a time per database (pg_advisory_lock's key: "prim" in ASCII).
const LOCK_KEY = 0x7072696d;

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name, "migration.sql");
      if (!existsSync(path)) return [];
      const sql = readFileSync(path, "utf8");
      return [{ name, sql, checksum: createHash("sha256").update(sql).digest("hex") }];
    });
}

/** Creates the database named in `url` when it does not exist (through the `postgres` database). */
async function ensureDatabase(url: URL): Promise<void> {
  const name = decodeURIComponent(url.pathname.slice(1));
  if (name === "" || name === "postgres") return;
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.href });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        // Another runner created it first: 42P04, or 23505 when both inserted at once.
        if (err.code !== "42P04" && err.code !== "23505") throw err;
      });
    }
  } finally {
    await client.end();
  }
}

/**
 * Applies pending migrations in name order, each in its own transaction, and records them as
 * `prisma migrate deploy` does. Idempotent; refuses (naming it) a database whose applied
 * migration differs from its file or whose file is gone. Returns what it applied.
 */
export async function migrate(options: MigrateOptions): Promise<{ applied: string[] }> {
  const log = options.log ?? (() => {});
  let url: URL;
  try {
    url = new URL(options.databaseUrl);
    if (!/^postgres(ql)?:$/.test(url.protocol)) throw new Error("not postgres");
  } catch {
    throw new Error(`DATABASE_URL is not a postgres:// URL: ${redact(options.databaseUrl)}`);
  }
  const files = readMigrations(options.migrationsDir);
  try {
    await ensureDatabase(url);
  } catch (err) {
    throw connectionError(err, url);
  }
  const client = new pg.Client({ connectionString: url.href });
  try {
    await client.connect();
  } catch (err) {
    throw connectionError(err, url);
  }
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    await client.query(BOOKKEEPING);
    const rows = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.rows.map((r) => [r.migration_name, r.checksum]));
    const byName = new Map(files.map((f) => [f.name, f]));
    for (const [name, checksum] of applied) {
      const file = byName.get(name);
      if (file === undefined) throw new Error(`migration ${name} is applied to the database but its file is missing`);
      if (file.checksum !== checksum) {
        throw new Error(
          `migration ${name} was changed after it was applied (checksum differs); add a new migration instead`,
        );
      }
    }
    const done: string[] = [];
    for (const file of files) {
      if (applied.has(file.name)) continue;
      await client.query("BEGIN");
      try {
        await client.query(file.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), file.checksum, file.name],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw new Error(`migration ${file.name} failed: ${(err as Error).message}`);
      }
      log(`applied ${file.name}`);
      done.push(file.name);
    }
    return { applied: done };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    await client.end().catch(() => {});
  }
}
