// Several processes opening the catalog at once on a day without partitions (cells starting
// together, or midnight): each makes sure the day's partitions exist, and none fails because
// another made one first.

import { freshDatabase, withClient } from "@prim/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CatalogHub, migrate } from "../src/index.js";

const DAY_MS = 86_400_000;
const db = freshDatabase("partitions-race");
beforeAll(() => migrate({ databaseUrl: db.url }));
afterAll(() => db.drop());

/** The audit table's partitions, by name (`audit_d<day>`). */
const partitions = () =>
  withClient(db.url, async (c) => {
    const { rows } = await c.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'audit'`,
    );
    return rows.map((r) => r.name);
  });

it("opens eight hubs at once on a new day, every one of them, and the day's partitions are there", async () => {
  for (const daysAhead of [3, 40]) {
    const at = Date.now() + daysAhead * DAY_MS;
    const day = Math.floor(at / DAY_MS);
    // That day and the two ahead (prim_audit_partitions' default), none made before.
    const expected = [day, day + 1, day + 2].map((d) => `audit_d${d}`);
    expect(await partitions()).not.toContain(expected[0]);
    const hubs = await Promise.all(Array.from({ length: 8 }, () => CatalogHub.open(db.url, { clock: () => at })));
    expect(hubs).toHaveLength(8);
    await Promise.all(hubs.map((hub) => hub.close()));
    expect(await partitions()).toEqual(expect.arrayContaining(expected));
    // An entry stamped that day has a partition to go to.
    await withClient(db.url, (c) =>
      c.query(
        `INSERT INTO audit (ts, id, workspace_id, group_name, primitive, actor, action)
         VALUES ($1, 'aud_race', 'ws_race', 'g', 'p', 'test', 'test.race')`,
        [at],
      ),
    );
  }
});
