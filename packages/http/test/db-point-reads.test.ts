// Point reads (a primary-key or unique-index lookup) are answered by the engine on its own
// read connection; these check, over HTTP, that they always agree with what was written.

import { LOCAL_PRINCIPAL } from "@prim/engine";
import { describe, expect, it } from "vitest";
import { withDb } from "./db-helpers.js";

const BY_ID = "SELECT id, name FROM items WHERE id = ?";

async function seeded() {
  const s = await withDb();
  await s.batch([
    { sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, sku TEXT UNIQUE)" },
    ...Array.from({ length: 20 }, (_, i) => ({
      sql: "INSERT INTO items (id, name, sku) VALUES (?, ?, ?)",
      params: [i + 1, `item ${i + 1}`, `sku-${i + 1}`],
    })),
  ]);
  return s;
}

describe("db: point reads", () => {
  it("read every acknowledged write, sequentially and under concurrent load", async () => {
    const { q } = await seeded();
    for (let n = 0; n < 30; n++) {
      expect((await q("UPDATE items SET name = ? WHERE id = 5", [`v${n}`])).status).toBe(200);
      expect((await q(BY_ID, [5])).body.rows).toEqual([{ id: 5, name: `v${n}` }]);
    }
    // Writers and readers interleaved: each writer reads its own row back after its ack.
    await Promise.all(
      Array.from({ length: 10 }, async (_, w) => {
        for (let n = 0; n < 10; n++) {
          await q("UPDATE items SET name = ? WHERE id = ?", [`w${w}-${n}`, w + 1]);
          expect((await q(BY_ID, [w + 1])).body.rows).toEqual([{ id: w + 1, name: `w${w}-${n}` }]);
        }
      }),
    );
    const inserted = await q("INSERT INTO items (name) VALUES ('new')");
    expect((await q(BY_ID, [inserted.body.last_insert_rowid])).body.rows).toEqual([
      { id: inserted.body.last_insert_rowid, name: "new" },
    ]);
    await q("DELETE FROM items WHERE id = 3");
    expect((await q(BY_ID, [3])).body).toEqual({
      columns: ["id", "name"],
      rows: [],
      rows_affected: 0,
      last_insert_rowid: null,
      truncated: false,
    });
  });

  it("read a write in the very callback that sees it acknowledged, while other reads keep running", async () => {
    const { engine, db } = await seeded();
    const query = (sql: string, params: unknown[]) =>
      engine.invoke<{ rows: unknown[] }>(LOCAL_PRINCIPAL, "db.query", db.id, { sql, params });
    // A read on every turn of the event loop keeps a snapshot open when the host's answer comes in.
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      void query(BY_ID, [2]);
      setImmediate(spin);
    };
    spin();
    try {
      for (let n = 0; n < 20; n++) {
        await query("UPDATE items SET name = ? WHERE id = 2", [`n${n}`]);
        expect((await query(BY_ID, [2])).rows).toEqual([{ id: 2, name: `n${n}` }]);
      }
    } finally {
      spinning = false;
    }
  });

  it("follow schema changes: a dropped unique index, a new column, a dropped table", async () => {
    const { q } = await seeded();
    const bySku = "SELECT * FROM items WHERE sku = ?";
    expect((await q(bySku, ["sku-4"])).body.rows).toEqual([{ id: 4, name: "item 4", sku: "sku-4" }]);
    await q("ALTER TABLE items ADD COLUMN price INTEGER DEFAULT 7");
    const after = await q(bySku, ["sku-4"]);
    expect(after.body.columns).toEqual(["id", "name", "sku", "price"]);
    expect(after.body.rows).toEqual([{ id: 4, name: "item 4", sku: "sku-4", price: 7 }]);
    await q("CREATE TABLE items2 AS SELECT * FROM items");
    await q("DROP TABLE items");
    await q("ALTER TABLE items2 RENAME TO items");
    expect((await q(bySku, ["sku-4"])).body.rows).toEqual([{ id: 4, name: "item 4", sku: "sku-4", price: 7 }]);
    await q("DROP TABLE items");
    const gone = await q(BY_ID, [1]);
    expect(gone.status).toBe(400);
    expect(gone.body.error.code).toBe("invalid_request");
    expect(gone.body.error.message).toContain("no such table: items");
  });

  it("see main as restored from a snapshot and as promoted from a branch", async () => {
    const { q, api, base } = await seeded();
    await q(BY_ID, [1]); // the engine's read connection is open from here on
    expect((await api("POST", `${base}/snapshots`, { name: "before" })).status).toBe(201);
    await q("UPDATE items SET name = 'changed' WHERE id = 1");
    expect((await q(BY_ID, [1])).body.rows).toEqual([{ id: 1, name: "changed" }]);
    expect((await api("POST", `${base}/restore`, { snapshot: "before" })).status).toBe(200);
    expect((await q(BY_ID, [1])).body.rows).toEqual([{ id: 1, name: "item 1" }]);

    expect((await api("POST", `${base}/branches`, { name: "next" })).status).toBe(201);
    await q("UPDATE items SET name = 'on branch' WHERE id = 1", undefined, "next");
    expect((await q(BY_ID, [1])).body.rows).toEqual([{ id: 1, name: "item 1" }]);
    expect((await q(BY_ID, [1], "next")).body.rows).toEqual([{ id: 1, name: "on branch" }]);
    expect((await api("POST", `${base}/branches/next/promote`, {})).status).toBe(200);
    expect((await q(BY_ID, [1])).body.rows).toEqual([{ id: 1, name: "on branch" }]);
  });

  it("keep TEMP objects to the request that made them, so a name always means main's table", async () => {
    const { q, batch } = await seeded();
    const inBatch = await batch([
      { sql: "CREATE TEMP TABLE items (id INTEGER PRIMARY KEY, name TEXT)" },
      { sql: "INSERT INTO temp.items VALUES (1, 'temp')" },
      { sql: BY_ID, params: [1] },
    ]);
    expect(inBatch.status).toBe(200);
    expect(inBatch.body.results[2].rows).toEqual([{ id: 1, name: "temp" }]); // within the batch
    expect((await q(BY_ID, [1])).body.rows).toEqual([{ id: 1, name: "item 1" }]);
    expect((await q("CREATE TEMP TABLE items (id INTEGER PRIMARY KEY, name TEXT)")).status).toBe(200);
    expect((await q("SELECT count(*) AS n FROM items")).body.rows).toEqual([{ n: 20 }]); // main's, via the host
    expect((await q(BY_ID, [2])).body.rows).toEqual([{ id: 2, name: "item 2" }]);
    expect((await q("SELECT name FROM sqlite_temp_schema")).body.rows).toEqual([]);
  });

  it("report bad parameters as the host does", async () => {
    const { q } = await seeded();
    const bad = await q(BY_ID, [{ nested: true }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("sql.params[0]");
    const few = await q("SELECT * FROM items WHERE id = ? AND sku = ?", [1]);
    expect(few.status).toBe(400);
    expect(few.body.error.code).toBe("invalid_request");
  });
});
