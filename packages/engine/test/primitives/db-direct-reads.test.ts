import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DirectReads, isBoundedProgram, parameterBytes } from "../../src/primitives/db/direct-reads.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

/** A WAL database written by its own connection (standing in for the SQL host) and a reader on it. */
function fixture() {
  const dir = mkdtempSync(join(tmpdir(), "prim-direct-"));
  const file = join(dir, "db.sqlite");
  const writer = new Database(file);
  writer.pragma("journal_mode = WAL");
  writer.exec(`
    CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, team INTEGER, big INTEGER, pic BLOB);
    CREATE INDEX users_team ON users (team);
    CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;`);
  const add = writer.prepare("INSERT INTO users (id, email, team, big, pic) VALUES (?, ?, ?, ?, ?)");
  for (let i = 1; i <= 50; i++) add.run(i, `u${i}@x.io`, i % 5, 2n ** 60n + BigInt(i), Buffer.from([i]));
  writer.prepare("INSERT INTO kv VALUES ('a', 'A')").run();
  const reads = new DirectReads(file);
  cleanups.push(() => {
    reads.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { writer, reads, file };
}

const program = (db: Database.Database, sql: string, args: unknown[] = []) =>
  db.prepare(`EXPLAIN ${sql}`).all(...args) as { addr: number; opcode: string; p2: number }[];

describe("db direct reads", () => {
  it("judges lookups by primary key, unique index and constants bounded, and loops not", () => {
    const { writer } = fixture();
    const bounded = (sql: string, args: unknown[] = []) => isBoundedProgram(program(writer, sql, args));
    expect(bounded("SELECT * FROM users WHERE id = ?", [1])).toBe(true);
    expect(bounded("SELECT id FROM users WHERE email = ?", ["u1@x.io"])).toBe(true);
    expect(bounded("SELECT v FROM kv WHERE k = ?", ["a"])).toBe(true);
    expect(bounded("SELECT 1 + 2, 'x'")).toBe(true);
    expect(bounded("SELECT * FROM users WHERE team = ?", [1])).toBe(false); // not unique: a loop
    expect(bounded("SELECT * FROM users")).toBe(false);
    expect(bounded("SELECT count(*) FROM users")).toBe(false); // walks every page
    expect(bounded("SELECT * FROM users WHERE id IN (1, 2, 3)")).toBe(false);
    expect(bounded("SELECT randomblob(1000000000)")).toBe(false); // one instruction, unbounded work
    expect(bounded("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c")).toBe(false);
  });

  it("answers bounded reads with the host's result shape, and leaves everything else to the host", () => {
    const { reads } = fixture();
    expect(reads.tryQuery({ sql: "SELECT id, email, big, pic FROM users WHERE id = ?", params: [7] })).toEqual({
      columns: ["id", "email", "big", "pic"],
      rows: [{ id: 7, email: "u7@x.io", big: (2n ** 60n + 7n).toString(), pic: Buffer.from([7]).toString("base64") }],
      rows_affected: 0,
      last_insert_rowid: null,
      truncated: false,
    });
    expect(reads.tryQuery({ sql: "SELECT id FROM users WHERE email = :e", params: { e: "u3@x.io" } })?.rows).toEqual([
      { id: 3 },
    ]);
    expect(reads.tryQuery({ sql: "SELECT id FROM users WHERE id = ?", params: [999] })?.rows).toEqual([]);
    expect(reads.tryQuery({ sql: "SELECT * FROM users WHERE team = ?", params: [1] })).toBeUndefined();
    expect(reads.tryQuery({ sql: "INSERT INTO kv VALUES ('b', 'B')" })).toBeUndefined();
    expect(reads.tryQuery({ sql: "SELECT nope FROM users WHERE id = 1" })).toBeUndefined(); // the host reports it
    expect(reads.tryQuery({ sql: "SELECT id FROM users WHERE id = ?", params: [{ bad: 1 }] })).toBeUndefined();
  });

  it("sees a write once released, and never runs a statement recompiled into a scan", async () => {
    const { writer, reads } = fixture();
    const byEmail = { sql: "SELECT id FROM users WHERE email = ?", params: ["u9@x.io"] };
    expect(reads.tryQuery(byEmail)?.rows).toEqual([{ id: 9 }]);
    writer.prepare("UPDATE users SET email = 'nine@x.io' WHERE id = 9").run();
    // Same snapshot until released (the store releases around every host request).
    expect(reads.tryQuery(byEmail)?.rows).toEqual([{ id: 9 }]);
    reads.release();
    expect(reads.tryQuery(byEmail)?.rows).toEqual([]);
    // The unique index goes: the same SQL would now scan the table, so it goes to the host.
    writer.exec("CREATE TABLE users2 AS SELECT * FROM users; DROP TABLE users; ALTER TABLE users2 RENAME TO users;");
    reads.release();
    expect(reads.tryQuery(byEmail)).toBeUndefined();
    // And the snapshot ends by itself at the end of the event loop's turn.
    const before = reads.tryQuery({ sql: "SELECT v FROM kv WHERE k = 'a'" })?.rows;
    writer.prepare("UPDATE kv SET v = 'A2' WHERE k = 'a'").run();
    await new Promise((resolve) => setImmediate(resolve));
    expect(before).toEqual([{ v: "A" }]);
    expect(reads.tryQuery({ sql: "SELECT v FROM kv WHERE k = 'a'" })?.rows).toEqual([{ v: "A2" }]);
  });

  it("judges a statement again once its table exists, and once a unique index bounds it", () => {
    const { writer, reads } = fixture();
    const byName = { sql: "SELECT id FROM tags WHERE name = ?", params: ["red"] };
    expect(reads.tryQuery(byName)).toBeUndefined(); // no such table yet: the host says so
    writer.exec("CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO tags (name) VALUES ('red')");
    reads.release();
    expect(reads.tryQuery(byName)).toBeUndefined(); // a scan now
    writer.exec("CREATE UNIQUE INDEX tags_name ON tags (name)");
    reads.release();
    reads.tryQuery({ sql: "SELECT 1" }); // a snapshot at the new schema is open
    expect(reads.tryQuery(byName)?.rows).toEqual([{ id: 1 }]);
  });

  it("waits for the file: nothing is answered before the host created it", () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-direct-"));
    const reads = new DirectReads(join(dir, "missing.sqlite"));
    cleanups.push(() => {
      reads.close();
      rmSync(dir, { recursive: true, force: true });
    });
    expect(reads.tryQuery({ sql: "SELECT 1" })).toBeUndefined();
  });

  describe("work budget (issue 15: bounded must bound work, not just instruction kinds)", () => {
    /** `(:a||:a||…)`, n terms: each Concat copies everything before it, so the work grows as n². */
    const concatKey = (n: number) => `SELECT id FROM users WHERE email = (${Array(n).fill(":a").join("||")})`;

    it("leaves string building to the host: a chain of || is not a bounded program", () => {
      const { writer, reads } = fixture();
      expect(isBoundedProgram(program(writer, concatKey(2), [{ a: "u" }]))).toBe(false);
      expect(isBoundedProgram(program(writer, "SELECT id FROM users WHERE email = ? || '@x.io'", ["u1"]))).toBe(false);
      // Even with a tiny parameter: the verdict is about the program, so the host runs it.
      expect(reads.tryQuery({ sql: concatKey(120), params: { a: "u" } })).toBeUndefined();
      expect(reads.tryQuery({ sql: "SELECT id FROM users WHERE email = ?", params: ["u1@x.io"] })?.rows).toEqual([
        { id: 1 },
      ]);
    });

    it("leaves programs longer than 256 instructions to the host", () => {
      const { writer, reads } = fixture();
      const wide = (n: number) => `SELECT ${Array.from({ length: n }, (_, i) => `${i} AS c${i}`).join(", ")}`;
      expect(isBoundedProgram(program(writer, wide(100)))).toBe(true);
      expect(isBoundedProgram(program(writer, wide(300)))).toBe(false);
      expect(reads.tryQuery({ sql: wide(300) })).toBeUndefined();
    });

    it("leaves statements whose parameters exceed 16 KiB in all to the host", () => {
      const { reads } = fixture();
      const byEmail = "SELECT id FROM users WHERE email = ?";
      expect(reads.tryQuery({ sql: byEmail, params: ["x".repeat(16_000)] })?.rows).toEqual([]);
      expect(reads.tryQuery({ sql: byEmail, params: ["x".repeat(17_000)] })).toBeUndefined();
      expect(reads.tryQuery({ sql: byEmail, params: ["x".repeat(1024 * 1024)] })).toBeUndefined();
      expect(
        reads.tryQuery({ sql: "SELECT id FROM users WHERE pic = :p", params: { p: { base64: "A".repeat(20_000) } } }),
      ).toBeUndefined();
      // Many small parameters count too.
      expect(reads.tryQuery({ sql: "SELECT id FROM users WHERE id = ?", params: Array(3000).fill(1) })).toBeUndefined();
      expect(parameterBytes(["ab", 1, null, { base64: "AAAA" }])).toBe(2 + 8 + 8 + 8 + 4 + 8);
    });

    it("sends a statement whose answer was over 256 KiB to the host from then on", () => {
      const { writer, reads } = fixture();
      writer.prepare("UPDATE users SET pic = ? WHERE id = 2").run(Buffer.alloc(300 * 1024, 7));
      const byId = { sql: "SELECT pic FROM users WHERE id = ?", params: [2] };
      const first = reads.tryQuery(byId);
      expect(Buffer.from(first?.rows[0]?.pic as string, "base64")).toHaveLength(300 * 1024);
      expect(reads.tryQuery(byId)).toBeUndefined();
      expect(reads.tryQuery({ sql: "SELECT pic FROM users WHERE id = ?", params: [3] })).toBeUndefined();
      // Other statements are not affected.
      expect(reads.tryQuery({ sql: "SELECT id FROM users WHERE id = ?", params: [2] })?.rows).toEqual([{ id: 2 }]);
    });
  });
});
