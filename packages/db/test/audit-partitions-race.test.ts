// Several processes opening the catalog at once on a day without partitions (cells starting
// together, or midnight): each makes sure the day's partitions exist, and none fails because
// another made one first.
import { afterAll, beforeAll, expect, it } from "vitest";
import { CatalogHub, migrate } from "../src/index.js";
import { freshDatabase } from "./pg.js";

const db = freshDatabase("partitions-race");
beforeAll(() => migrate({ databaseUrl: db.url }));
afterAll(() => db.drop());

it("opens eight hubs at once on a new day, every one of them", async () => {
  for (const daysAhead of [3, 40]) {
    const at = Date.now() + daysAhead * 86_400_000;
    const hubs = await Promise.all(Array.from({ length: 8 }, () => CatalogHub.open(db.url, { clock: () => at })));
    expect(hubs).toHaveLength(8);
    await Promise.all(hubs.map((hub) => hub.close()));
  }
});
