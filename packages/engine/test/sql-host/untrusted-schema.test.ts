import { join } from "node:path";
import { LOCAL_PRINCIPAL, type PrimitiveInfo, type QueryResult } from "@prim/wire";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { testEngine } from "../helpers.js";

/**
 * A db file's schema is not trusted (issue 35, items 2 and 13): a view or trigger that a file
 * brings — one written by another program, or imported from an archive — cannot reach a pragma
 * function (`pragma_database_list` would answer the server's absolute path), because the SQL
 * host opens every database with `trusted_schema=OFF`. User SQL is refused such functions by
 * name already (sql-safety.ts); this closes the door a file's own schema would open.
 */
describe("db: a file's own schema runs untrusted", () => {
  it("refuses a view that reads pragma_database_list, while ordinary views and triggers work", async () => {
    const { engine, dataDir } = testEngine();
    const run = <T = unknown>(op: string, target: string | null, input: unknown) =>
      engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
    await run("group.create", null, { name: "g" });
    const db = await run<PrimitiveInfo>("primitive.create", null, { name: "main", type: "db", group: "g" });
    await run("db.query", db.id, { sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, doc TEXT)" });

    // What a hostile file would carry, written behind the engine's back.
    const file = new Database(join(dataDir, "primitives", `${db.id}.sqlite`));
    file.exec(`
      CREATE VIEW leak AS SELECT file FROM pragma_database_list;
      CREATE TABLE log (what TEXT);
      CREATE TRIGGER t_leak AFTER INSERT ON t BEGIN INSERT INTO log SELECT file FROM pragma_database_list; END;
      CREATE VIEW docs AS SELECT id, json_extract(doc, '$.name') AS name, lower(doc) AS low FROM t;
      CREATE TRIGGER t_log AFTER UPDATE ON t BEGIN INSERT INTO log VALUES ('updated ' || new.id); END;
    `);
    file.close();

    const refused = run("db.query", db.id, { sql: "SELECT * FROM leak" });
    await expect(refused).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining("unsafe use"),
    });
    await expect(refused).rejects.not.toMatchObject({ message: expect.stringContaining(dataDir) });
    await expect(run("db.query", db.id, { sql: "INSERT INTO t (doc) VALUES ('{}')" })).rejects.toMatchObject({
      code: "invalid_request",
    });
    expect((await run<QueryResult>("db.query", db.id, { sql: "SELECT count(*) AS n FROM log" })).rows).toEqual([
      { n: 0 },
    ]);

    // The rightful schema: a view with ordinary functions and a trigger that writes a table.
    await run("db.query", db.id, { sql: "DROP TRIGGER t_leak" });
    await run("db.query", db.id, { sql: `INSERT INTO t (doc) VALUES ('{"name":"Ada"}')` });
    await run("db.query", db.id, { sql: "UPDATE t SET doc = doc" });
    expect((await run<QueryResult>("db.query", db.id, { sql: "SELECT name FROM docs" })).rows).toEqual([
      { name: "Ada" },
    ]);
    expect((await run<QueryResult>("db.query", db.id, { sql: "SELECT what FROM log" })).rows).toEqual([
      { what: "updated 1" },
    ]);
  });
});
