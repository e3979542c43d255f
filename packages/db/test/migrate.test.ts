import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freshDatabase, withClient } from "@prim/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, migrate, readMigrations } from "../src/index.js";
import { databaseFacts, diffFacts, schemaFacts } from "./schema-diff.js";

const SCHEMA = fileURLToPath(new URL("../prisma/schema.prisma", import.meta.url));
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

function database(label: string): string {
  const db = freshDatabase(label);
  cleanups.push(db.drop);
  return db.url;
}

/** A copy of the package's migrations that a test may change. */
function migrationsCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "prim-migrations-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

describe("prim migrate", () => {
  it("creates the database, applies every migration once, and is idempotent", async () => {
    const url = database("fresh");
    const first = await migrate({ databaseUrl: url });
    expect(first.applied).toEqual(readMigrations().map((m) => m.name));
    expect(first.applied.length).toBeGreaterThan(0);
    expect((await migrate({ databaseUrl: url })).applied).toEqual([]);
    const rows = await withClient(url, (c) =>
      c.query(`SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"`),
    );
    expect(rows.rows.map((r) => r.migration_name)).toEqual(first.applied);
    expect(rows.rows.every((r) => /^[0-9a-f]{64}$/.test(r.checksum) && r.finished_at !== null)).toBe(true);
  });

  it("applies once when two runners start together", async () => {
    const url = database("race");
    const [a, b] = await Promise.all([migrate({ databaseUrl: url }), migrate({ databaseUrl: url })]);
    expect([...a.applied, ...b.applied].sort()).toEqual(readMigrations().map((m) => m.name));
  });

  it("refuses a database whose applied migration was changed, naming it", async () => {
    const url = database("changed");
    const dir = migrationsCopy();
    await migrate({ databaseUrl: url, migrationsDir: dir });
    const [first] = readMigrations(dir);
    writeFileSync(join(dir, first?.name as string, "migration.sql"), `${first?.sql}\n-- edited\n`);
    await expect(migrate({ databaseUrl: url, migrationsDir: dir })).rejects.toThrow(
      `migration ${first?.name} was changed after it was applied`,
    );
  });

  it("refuses a database whose applied migration's file is gone", async () => {
    const url = database("missing");
    const dir = migrationsCopy();
    await migrate({ databaseUrl: url, migrationsDir: dir });
    const [first] = readMigrations(dir);
    rmSync(join(dir, first?.name as string), { recursive: true });
    await expect(migrate({ databaseUrl: url, migrationsDir: dir })).rejects.toThrow(
      `migration ${first?.name} is applied to the database but its file is missing`,
    );
  });

  it("applies a new migration after the old ones, and rolls back one that fails", async () => {
    const url = database("later");
    const dir = migrationsCopy();
    await migrate({ databaseUrl: url, migrationsDir: dir });
    cpSync(join(dir, readMigrations(dir)[0]?.name as string), join(dir, "29990101000000_broken"), { recursive: true });
    writeFileSync(join(dir, "29990101000000_broken", "migration.sql"), "CREATE TABLE t_ok (a int);\nSELECT nope;\n");
    await expect(migrate({ databaseUrl: url, migrationsDir: dir })).rejects.toThrow(
      "migration 29990101000000_broken failed",
    );
    const left = await withClient(url, (c) => c.query("SELECT to_regclass('t_ok') AS t"));
    expect(left.rows[0].t).toBeNull();
  });

  it("says clearly what is wrong with a malformed URL or a server that does not answer", async () => {
    await expect(migrate({ databaseUrl: "mysql://x@localhost/prim" })).rejects.toThrow(
      "DATABASE_URL is not a postgres:// URL: mysql://x@localhost/prim",
    );
    await expect(migrate({ databaseUrl: "postgres://postgres:secret@127.0.0.1:1/prim" })).rejects.toThrow(
      /^Postgres does not answer at postgres:\/\/postgres@127\.0\.0\.1:1\/prim \(ECONNREFUSED\); start it with: pg_ctlcluster/,
    );
  });
});

describe("the Prisma schema and a migrated database", () => {
  it("agree: every table, column (type, nullability), primary key, unique constraint and index", async () => {
    const url = database("agree");
    await migrate({ databaseUrl: url });
    const facts = await withClient(url, databaseFacts);
    const schema = schemaFacts(SCHEMA);
    expect(schema.size).toBeGreaterThan(50);
    expect(diffFacts(schema, facts)).toEqual({ onlyInSchema: [], onlyInDatabase: [] });
  });

  it("disagree, and say where, when the database has a column the schema lacks or lacks an index", async () => {
    const url = database("drift");
    await migrate({ databaseUrl: url });
    await withClient(url, async (c) => {
      await c.query(`ALTER TABLE "api_keys" ADD COLUMN "note" TEXT`);
      await c.query(`DROP INDEX "api_keys_workspace_id_idx"`);
    });
    const diff = diffFacts(schemaFacts(SCHEMA), await withClient(url, databaseFacts));
    expect(diff).toEqual({
      onlyInSchema: ["index api_keys(workspace_id)"],
      onlyInDatabase: ["column api_keys.note text null"],
    });
  });
});
