import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "@prim/testkit/rest";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { dbOn, withDb } from "./db-helpers.js";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes an export body to a temp file and opens it read-only with better-sqlite3. */
function openExport(bytes: ArrayBuffer): Database.Database {
  const dir = mkdtempSync(join(tmpdir(), "prim-db-export-"));
  temps.push(dir);
  const file = join(dir, "export.sqlite");
  writeFileSync(file, Buffer.from(bytes));
  return new Database(file, { readonly: true, fileMustExist: true });
}

async function seeded() {
  const server = await withDb();
  await server.q("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await server.q("INSERT INTO notes (body) VALUES ('main-1')");
  return server;
}

describe("db: branches", () => {
  it("creates a branch as a copy of main and lists it", async () => {
    const { api, base, q, clock } = await seeded();
    const created = await api("POST", `${base}/branches`, { name: "feature" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: "feature", created_at: clock.now(), main_changed: false });
    const list = await api("GET", `${base}/branches`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [created.body] });
    expect((await q("SELECT body FROM notes", undefined, "feature")).body.rows).toEqual([{ body: "main-1" }]);
    const tables = await api("GET", `${base}/tables?branch=feature`);
    expect(tables.body.data).toEqual([{ name: "notes", type: "table" }]);
  });

  it("answers 409 already_exists for a duplicate branch name", async () => {
    const { api, base } = await seeded();
    await api("POST", `${base}/branches`, { name: "dup" });
    const again = await api("POST", `${base}/branches`, { name: "dup" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_exists");
  });

  it("refuses branch names that are not valid names", async () => {
    const { api, base } = await seeded();
    for (const name of ["../escape", "a/b", "", ".hidden", "x".repeat(64)]) {
      const res = await api("POST", `${base}/branches`, { name });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    expect((await api("GET", `${base}/branches`)).body.data).toEqual([]);
  });

  it("keeps writes on a branch invisible on main until promote", async () => {
    const { api, base, q, batch } = await seeded();
    await api("POST", `${base}/branches`, { name: "feature" });
    await q("INSERT INTO notes (body) VALUES ('branch-1')", undefined, "feature");
    await batch([{ sql: "CREATE TABLE extra (x)" }, { sql: "INSERT INTO extra VALUES (1)" }], "feature");
    expect((await q("SELECT body FROM notes ORDER BY id")).body.rows).toEqual([{ body: "main-1" }]);
    expect((await api("GET", `${base}/tables`)).body.data).toEqual([{ name: "notes", type: "table" }]);
    expect((await api("GET", `${base}/tables/extra`)).status).toBe(404);
    expect((await api("GET", `${base}/tables/extra?branch=feature`)).status).toBe(200);
    // Reading main does not count as a change of main.
    expect((await api("GET", `${base}/branches`)).body.data[0].main_changed).toBe(false);

    const promoted = await api("POST", `${base}/branches/feature/promote`, {});
    expect(promoted.status).toBe(200);
    expect(promoted.body).toEqual({ promoted: "feature" });
    expect((await q("SELECT body FROM notes ORDER BY id")).body.rows).toEqual([
      { body: "main-1" },
      { body: "branch-1" },
    ]);
    expect((await q("SELECT x FROM extra")).body.rows).toEqual([{ x: 1 }]);
    expect((await api("GET", `${base}/branches`)).body.data).toEqual([]);
    expect((await q("SELECT 1 AS one", undefined, "feature")).status).toBe(404);
  });

  it("answers 409 branch_conflict when main changed, and promotes with force", async () => {
    const { api, base, q } = await seeded();
    await api("POST", `${base}/branches`, { name: "feature" });
    await q("INSERT INTO notes (body) VALUES ('branch-1')", undefined, "feature");
    await q("INSERT INTO notes (body) VALUES ('main-2')");
    expect((await api("GET", `${base}/branches`)).body.data[0]).toMatchObject({ name: "feature", main_changed: true });

    const refused = await api("POST", `${base}/branches/feature/promote`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("branch_conflict");
    expect((await q("SELECT body FROM notes ORDER BY id")).body.rows).toEqual([{ body: "main-1" }, { body: "main-2" }]);

    const forced = await api("POST", `${base}/branches/feature/promote`, { force: true });
    expect(forced.status).toBe(200);
    expect(forced.body).toEqual({ promoted: "feature" });
    expect((await q("SELECT body FROM notes ORDER BY id")).body.rows).toEqual([
      { body: "main-1" },
      { body: "branch-1" },
    ]);
    // Main keeps working normally after a promote.
    expect((await q("INSERT INTO notes (body) VALUES ('after')")).status).toBe(200);
    expect((await q("SELECT count(*) AS c FROM notes")).body.rows).toEqual([{ c: 3 }]);
  });

  it("treats promoting one branch as a change of main for the other branches", async () => {
    const { api, base, q } = await seeded();
    await api("POST", `${base}/branches`, { name: "first" });
    await api("POST", `${base}/branches`, { name: "second" });
    await q("INSERT INTO notes (body) VALUES ('first')", undefined, "first");
    expect((await api("POST", `${base}/branches/first/promote`, {})).status).toBe(200);
    expect((await api("GET", `${base}/branches`)).body.data).toEqual([
      { name: "second", created_at: expect.any(Number), main_changed: true },
    ]);
    const res = await api("POST", `${base}/branches/second/promote`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("branch_conflict");
    expect((await q("SELECT body FROM notes ORDER BY id")).body.rows).toEqual([{ body: "main-1" }, { body: "first" }]);
  });

  it("answers 404 for promote, delete, query, batch and tables on an unknown branch", async () => {
    const { api, base, q, batch } = await seeded();
    const promote = await api("POST", `${base}/branches/ghost/promote`, {});
    expect(promote.status).toBe(404);
    expect(promote.body.error.code).toBe("not_found");
    expect(promote.body.error.message).toContain("ghost");
    expect((await api("DELETE", `${base}/branches/ghost`)).status).toBe(404);
    const query = await q("SELECT 1", undefined, "ghost");
    expect(query.status).toBe(404);
    expect(query.body.error.code).toBe("not_found");
    expect((await batch([{ sql: "SELECT 1" }], "ghost")).status).toBe(404);
    expect((await api("GET", `${base}/tables?branch=ghost`)).status).toBe(404);
    expect((await api("GET", `${base}/tables/notes?branch=ghost`)).status).toBe(404);
  });

  it("discards a branch on delete without touching main", async () => {
    const { api, base, q } = await seeded();
    await api("POST", `${base}/branches`, { name: "scratch" });
    await q("DELETE FROM notes", undefined, "scratch");
    const del = await api("DELETE", `${base}/branches/scratch`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: "scratch" });
    expect((await api("GET", `${base}/branches`)).body.data).toEqual([]);
    expect((await q("SELECT 1", undefined, "scratch")).status).toBe(404);
    expect((await q("SELECT body FROM notes")).body.rows).toEqual([{ body: "main-1" }]);
    // The name can be reused, and the new branch starts from main again.
    expect((await api("POST", `${base}/branches`, { name: "scratch" })).status).toBe(201);
    expect((await q("SELECT count(*) AS c FROM notes", undefined, "scratch")).body.rows).toEqual([{ c: 1 }]);
  });
});

describe("db: export", () => {
  it("downloads a consistent SQLite file that opens with better-sqlite3 and holds the data", async () => {
    const { url, base, q, dataDir } = await seeded();
    await q("CREATE TABLE blobs (b BLOB)");
    await q("INSERT INTO blobs VALUES (?)", [{ base64: Buffer.from([1, 2, 3]).toString("base64") }]);
    const res = await fetch(`${url}${base}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect(res.headers.get("content-disposition")).toContain('filename="main.sqlite"');
    const db = openExport(await res.arrayBuffer());
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.prepare("SELECT body FROM notes").all()).toEqual([{ body: "main-1" }]);
      expect(db.prepare("SELECT b FROM blobs").pluck().get()).toEqual(Buffer.from([1, 2, 3]));
    } finally {
      db.close();
    }
    // The temporary export file is removed once sent.
    const tmp = join(dataDir, "tmp");
    await vi.waitFor(() => expect(existsSync(tmp) ? readdirSync(tmp) : []).toEqual([]));
  });

  it("exports main, not a branch's unpromoted writes", async () => {
    const { url, api, base, q } = await seeded();
    await api("POST", `${base}/branches`, { name: "feature" });
    await q("INSERT INTO notes (body) VALUES ('branch-only')", undefined, "feature");
    const db = openExport(await (await fetch(`${url}${base}/export`)).arrayBuffer());
    try {
      expect(db.prepare("SELECT body FROM notes").all()).toEqual([{ body: "main-1" }]);
    } finally {
      db.close();
    }
  });
});

describe("db: durability and lifecycle", () => {
  it("keeps data and branches across a server restart on the same data directory", async () => {
    const first = await seeded();
    await first.api("POST", `${first.base}/branches`, { name: "keep" });
    await first.q("INSERT INTO notes (body) VALUES ('on-branch')", undefined, "keep");
    await first.q("INSERT INTO notes (body) VALUES ('main-2')");
    await first.close();

    const second = dbOn(await startServer({ dataDir: first.dataDir }), first.db);
    expect((await second.q("SELECT body FROM notes ORDER BY id")).body.rows).toEqual([
      { body: "main-1" },
      { body: "main-2" },
    ]);
    const branches = (await second.api("GET", `${second.base}/branches`)).body.data;
    expect(branches).toEqual([{ name: "keep", created_at: expect.any(Number), main_changed: true }]);
    expect((await second.q("SELECT body FROM notes ORDER BY id", undefined, "keep")).body.rows).toEqual([
      { body: "main-1" },
      { body: "on-branch" },
    ]);
    expect((await second.api("POST", `${second.base}/branches/keep/promote`, {})).body.error.code).toBe(
      "branch_conflict",
    );
  });

  it("deletes the main file and the <id>.d directory when the primitive is deleted", async () => {
    const { api, base, q, db, dataDir } = await seeded();
    await api("POST", `${base}/branches`, { name: "b1" });
    await q("INSERT INTO notes (body) VALUES ('x')", undefined, "b1");
    const dir = join(dataDir, "primitives");
    expect(existsSync(join(dir, `${db.id}.sqlite`))).toBe(true);
    expect(existsSync(join(dir, `${db.id}.d`))).toBe(true);
    const del = await api("DELETE", base);
    expect(del.status).toBe(204);
    expect(readdirSync(dir).filter((f) => f.startsWith(db.id))).toEqual([]);
    expect((await q("SELECT 1")).status).toBe(404);
  });
});
