import { readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ImportResult, Page, PrimitiveInfo, PrimitiveType, QueryResult } from "@prim/wire";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { END_OF_ARCHIVE, padding, tarHeader } from "../../src/archive/tar.js";
import { tempDir } from "../helpers.js";
import {
  call,
  create,
  exportFor,
  importInto,
  leftovers,
  recipientOf,
  seedEverything,
  sha256,
  tarEntries,
  twoEngines,
} from "./fixtures.js";

/**
 * Issue 35, item 2: a SQLite file inside a group archive never runs anything it brings in the
 * engine's process. Every type but `db` must have exactly the schema its own code makes (no
 * trigger, view, virtual table, table, column or index of the archive's own); every file must
 * pass SQLite's quick_check; anything else is 400 naming the entry, with nothing imported. A
 * `db` file keeps the user's triggers, which run only in the SQL host under its time limit.
 * Each hostile archive is a real export whose one file was edited with SQLite and re-tarred.
 */

type Archive = Awaited<ReturnType<typeof exportFor>>;

/** `archive` with the bytes of the primitive file of `type` replaced by `edit`'s (manifest updated). */
function withFile(archive: Archive, type: PrimitiveType, edit: (bytes: Buffer) => Buffer) {
  const entries = tarEntries(archive.bytes);
  const target = entries.find((e) => e.name.endsWith(`-${type}.sqlite`));
  if (target === undefined) throw new Error(`no ${type} entry`);
  const bodyOf = (e: { offset: number; size: number }) => archive.bytes.subarray(e.offset, e.offset + e.size);
  const edited = edit(Buffer.from(bodyOf(target)));
  const parts: Buffer[] = [];
  const put = (name: string, body: Buffer) => parts.push(tarHeader(name, body.length, 0), body, padding(body.length));
  for (const e of entries) {
    if (e.name === "prim-archive.json") {
      const manifest = JSON.parse(bodyOf(e).toString());
      for (const p of manifest.primitives) {
        if (p.entry === target.name) Object.assign(p, { size: edited.length, sha256: sha256(edited) });
      }
      put(e.name, Buffer.from(JSON.stringify(manifest)));
    } else put(e.name, e.name === target.name ? edited : Buffer.from(bodyOf(e)));
  }
  const bytes = Buffer.concat([...parts, END_OF_ARCHIVE]);
  return { bytes, sha256: sha256(bytes), entry: target.name };
}

/** A SQLite file's bytes after `sql` ran on them (a real SQLite, as an attacker would edit it). */
function editedWith(sql: string) {
  return (bytes: Buffer): Buffer => {
    const path = join(tempDir(), "edit.sqlite");
    writeFileSync(path, bytes);
    const db = new Database(path);
    db.exec(sql);
    db.pragma("journal_mode = DELETE"); // folds the WAL back into the one file
    db.close();
    const edited = readFileSync(path);
    rmSync(path);
    return edited;
  };
}

/** A statement that never ends (no LIMIT): run only where a time limit stops it (the SQL host). */
const FOREVER =
  "SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)";
/** The same with a LIMIT, in files that must be refused: were one run here, the suite would still end. */
const SLOW =
  "SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000) SELECT x FROM c)";

/** A seeded A, a B with data of its own, A's archive sealed for B, and B's check that nothing changed. */
async function setup() {
  const [a, b] = twoEngines();
  await seedEverything(a.engine);
  await call(b.engine, "group.create", null, { name: "keep" });
  const kept = await create(b.engine, "keep", "cache", "kv");
  await call(b.engine, "kv.set", kept.id, { key: "mine", value: { v: 1 } });
  const archive = await exportFor(a.engine, "app", await recipientOf(b.engine));
  const untouched = async () => {
    await expect(call(b.engine, "group.get", "app")).rejects.toMatchObject({ code: "not_found" });
    const all = await call<Page<PrimitiveInfo>>(b.engine, "primitive.list", null, {});
    expect(all.data.map((p) => p.id)).toEqual([kept.id]);
    expect(await call(b.engine, "kv.get", kept.id, { key: "mine" })).toMatchObject({ value: { v: 1 }, version: 1 });
    expect(leftovers(b.dataDir)).toEqual([]);
  };
  /** The rightful caller: the same archive, unedited, imports every type into the same B. */
  const intactImports = async () => {
    const result = await importInto(b.engine, "app", archive.bytes, archive.sha256);
    expect(result.imported.map((p) => p.type).sort()).toEqual(
      ["db", "fs", "kv", "memory", "queue", "storage", "vault"].sort(),
    );
  };
  return { a, b, kept, archive, untouched, intactImports };
}

describe("imported SQLite files: a non-db file must have exactly its type's schema", () => {
  it.each([
    [
      "a recursive trigger in a kv file",
      "kv",
      `CREATE TRIGGER boom AFTER INSERT ON kv BEGIN ${SLOW}; END`,
      "holds trigger 'boom', which this type's files do not have",
    ],
    [
      "a trigger in a vault file (it would fire as the values are re-sealed)",
      "vault",
      `CREATE TRIGGER boom AFTER UPDATE ON secrets BEGIN ${SLOW}; END`,
      "holds trigger 'boom'",
    ],
    ["a view in a kv file", "kv", "CREATE VIEW peek AS SELECT * FROM kv", "holds view 'peek'"],
    ["an extra table in a queue file", "queue", "CREATE TABLE extra (x)", "holds table 'extra'"],
    [
      "an extra column in a kv file",
      "kv",
      "ALTER TABLE kv ADD COLUMN extra TEXT",
      "has table 'kv' unlike this type's files",
    ],
    [
      "an extra index in a storage file",
      "storage",
      "CREATE INDEX objects_by_size ON objects (size)",
      "holds index 'objects_by_size'",
    ],
    ["a virtual table in a memory file", "memory", "CREATE VIRTUAL TABLE more USING fts5 (x)", "holds table 'more'"],
    ["a missing index in a kv file", "kv", "DROP INDEX kv_by_expiry", "lacks index 'kv_by_expiry'"],
  ] as const)(
    "refuses %s (400 naming the entry); nothing imported; the intact archive imports",
    async (_what, type, sql, problem) => {
      const { b, archive, untouched, intactImports } = await setup();
      const hostile = withFile(archive, type, editedWith(sql));
      await expect(importInto(b.engine, "app", hostile.bytes, hostile.sha256)).rejects.toMatchObject({
        code: "invalid_request",
        message: expect.stringMatching(
          new RegExp(
            `^archive entry '${hostile.entry}' \\(${type}\\) ${problem.replace(/[()]/g, "\\$&")}.*; nothing was imported$`,
          ),
        ),
      });
      await untouched();
      await intactImports();
    },
  );
});

describe("imported SQLite files: damaged files are 400 at import, never a 500 later", () => {
  const notSqlite = () => Buffer.from("this is not a SQLite database, only text\n".repeat(200));
  const truncated = (bytes: Buffer) => bytes.subarray(0, bytes.length - 4096); // its last page cut off
  it.each([
    ["kv", "not SQLite", notSqlite],
    ["db", "not SQLite", notSqlite],
    ["kv", "truncated", truncated],
    ["db", "truncated", truncated],
  ] as const)("refuses a %s file that is %s", async (type, _what, damage) => {
    const { b, archive, untouched, intactImports } = await setup();
    const hostile = withFile(archive, type, damage);
    await expect(importInto(b.engine, "app", hostile.bytes, hostile.sha256)).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(
        new RegExp(
          `^archive entry '${hostile.entry}' \\(${type}\\) (is not a readable SQLite database|cannot be opened as SQLite|fails SQLite's quick_check) .*; nothing was imported$`,
        ),
      ),
    });
    await untouched();
    await intactImports();
  });
});

/** Every file this process has open (Linux: /proc/self/fd), by path. */
function openFiles(): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(join("/proc/self/fd", fd))];
    } catch {
      return []; // closed while listed
    }
  });
}

describe("imported SQLite files: a db file keeps the user's triggers, run only in the SQL host", () => {
  it("imports a db file with a never-ending trigger and a view; the trigger runs only in the host, under its limit", async () => {
    const { a, b, kept, archive } = await setup();
    const userSchema = withFile(
      archive,
      "db",
      editedWith(
        `CREATE TRIGGER slow AFTER INSERT ON users BEGIN ${FOREVER}; END; CREATE VIEW top AS SELECT name FROM users ORDER BY score DESC`,
      ),
    );
    const result = await importInto(b.engine, "app", userSchema.bytes, userSchema.sha256);
    const db = result.imported.find((p) => p.type === "db") as ImportResult["imported"][number];
    // Imported without this process ever holding the file open (the check ran in a SQL host).
    const file = b.engine.services.files.path(db.id);
    expect(openFiles()).not.toContain(file);
    const schema = await call<QueryResult>(b.engine, "db.query", db.id, {
      sql: "SELECT type, name FROM sqlite_schema WHERE type IN ('trigger', 'view') ORDER BY name",
    });
    expect(schema.rows).toEqual([
      { type: "trigger", name: "slow" },
      { type: "view", name: "top" },
    ]);
    // The trigger fires in the SQL host: while it runs, this process answers other primitives
    // (B's own kv, and another engine's) — the insert is still unanswered when they are.
    let settled = false;
    const insert = call(b.engine, "db.exec", db.id, { sql: "INSERT INTO users (name) VALUES ('eve')" });
    insert.then(
      () => (settled = true),
      () => (settled = true),
    );
    expect(await call(b.engine, "kv.get", kept.id, { key: "mine" })).toMatchObject({ value: { v: 1 } });
    const aKv = (await call<Page<PrimitiveInfo>>(a.engine, "primitive.list", null, {})).data.find(
      (p) => p.type === "kv",
    );
    expect(await call(a.engine, "kv.get", aKv?.id ?? "", { key: "user/1" })).toMatchObject({ value: { name: "Ada" } });
    expect(settled).toBe(false);
    await expect(insert).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/ran longer than \d+ ms and was interrupted/),
    });
    // The host's limit stopped it; the db still answers, without the row.
    const users = await call<QueryResult>(b.engine, "db.query", db.id, { sql: "SELECT count(*) AS n FROM users" });
    expect(users.rows).toEqual([{ n: 3 }]);
  }, 60_000);
});
