// A db primitive's change log: kept by the SQL host in the user's database, one entry per
// statement that changed something, in that statement's (or batch's) transaction.
import { type ChangePage, LOCAL_PRINCIPAL, type PrimitiveInfo, type ServiceError } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { testEngine } from "../helpers.js";

describe("db change log", () => {
  it("records each statement that changed something once, nothing of a failed or rolled-back one", async () => {
    const { engine } = testEngine();
    const invoke = <T = unknown>(op: string, target: string | null, input: unknown) =>
      engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
    const refused = (run: Promise<unknown>) =>
      run.then(
        () => {
          throw new Error("expected a refusal");
        },
        (err: unknown) => err as ServiceError,
      );
    await invoke("group.create", null, { name: "g" });
    const db = await invoke<PrimitiveInfo>("primitive.create", null, { name: "app", type: "db", group: "g" });
    const exec = (sql: string, params?: unknown[]) => invoke("db.exec", db.id, { sql, ...(params ? { params } : {}) });
    const changes = (input: Record<string, unknown> = {}) => invoke<ChangePage>("changes.read", db.id, input);

    await exec('CREATE TABLE "Notes" (id INTEGER PRIMARY KEY, body TEXT UNIQUE)');
    await exec("INSERT INTO Notes (body) VALUES (?), (?)", ["secret body", "b"]);
    await exec("UPDATE Notes SET body = 'x' WHERE id = 99"); // changes nothing
    expect((await refused(exec("INSERT INTO Notes (body) VALUES ('b')"))).code).toBe("conflict");
    const batch = await refused(
      invoke("db.batch", db.id, {
        statements: [{ sql: "DELETE FROM Notes" }, { sql: "INSERT INTO nope VALUES (1)" }],
      }),
    );
    expect(batch.message).toContain("rolled back");
    await invoke("db.batch", db.id, {
      statements: [{ sql: "WITH x AS (SELECT 1) DELETE FROM main.Notes WHERE id = 1" }, { sql: "SELECT 1" }],
    });
    await invoke("db.query", db.id, { sql: "SELECT * FROM Notes" });

    const page = await changes();
    expect(page.data.map((e) => [e.op, e.table, e.detail?.rows ?? null])).toEqual([
      ["create", "Notes", null],
      ["insert", "Notes", 2],
      ["delete", "Notes", 1],
    ]);
    expect(JSON.stringify(page)).not.toContain("secret body");

    // The log is the engine's: hidden from the table list, and a user's write to it is refused.
    const tables = await invoke<{ data: { name: string }[] }>("db.tables", db.id, {});
    expect(tables.data.map((t) => t.name)).toEqual(["Notes"]);
    for (const sql of [
      "DELETE FROM _prim_changes",
      "INSERT INTO \"_prim_changes\" (ts, op, subject) VALUES (1, 'insert', 'forged')",
      "DROP TABLE _prim_changes_state",
      "CREATE TRIGGER t AFTER INSERT ON Notes BEGIN DELETE FROM _PRIM_CHANGES; END",
    ]) {
      expect((await refused(exec(sql))).code, sql).toBe("forbidden");
    }
    expect((await changes({ after: page.cursor })).data).toEqual([]);

    // A restore starts a new epoch: cursors from before are 409.
    const snap = await invoke<{ id: string }>("primitive.snapshot", db.id, {});
    await exec("INSERT INTO Notes (body) VALUES ('after snapshot')");
    await invoke("primitive.restore", db.id, { snapshot: snap.id });
    const stale = await refused(changes({ after: page.cursor }));
    expect(stale.code).toBe("conflict");
    expect((await changes()).data.map((e) => e.op)).toEqual(["create", "insert", "delete"]);
  });
});
