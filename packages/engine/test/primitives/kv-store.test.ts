import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ResponseBudget } from "../../src/core/response-budget.js";
import { ChangeLog, DEFAULT_CHANGE_RETENTION } from "../../src/primitives/changes/log.js";
import { KvStore } from "../../src/primitives/kv/store.js";

const json = (value: unknown) => ({ data: JSON.stringify(value), encoding: "json" as const });

function store() {
  const clock = new ManualClock(1_000_000);
  const db = new Database(":memory:");
  return { kv: new KvStore(db, clock, testLog(db, clock)), db, clock };
}

describe("KvStore", () => {
  it("sweeps expired rows off disk at most once a minute, on a write", async () => {
    const { kv, db, clock } = store();
    await kv.set({ key: "a", value: json(1), ttlMs: 1_000 });
    await kv.set({ key: "b", value: json(2) });
    const rows = () => (db.prepare("SELECT count(*) AS n FROM kv").get() as { n: number }).n;
    clock.advance(30_000);
    await kv.set({ key: "c", value: json(3) }); // within a minute of the first sweep: no sweep
    expect(rows()).toBe(3);
    expect(kv.count()).toBe(2);
    clock.advance(60_000);
    await kv.set({ key: "d", value: json(4) });
    expect(rows()).toBe(3);
    expect(kv.get("a")).toBeNull();
  });

  it("rolls back every item of setAll when one fails", async () => {
    const { kv } = store();
    await kv.set({ key: "x", value: json("old") });
    await expect(
      kv.setAll([
        { key: "a", value: json(1) },
        { key: "x", value: json("new"), ifVersion: 0 },
      ]),
    ).rejects.toThrow(/items\[1\].*nothing was written/);
    expect(kv.get("a")).toBeNull();
    expect(kv.get("x")?.value).toBe("old");
  });

  it("lists by byte order and stops at the end of the prefix", async () => {
    const { kv } = store();
    for (const key of ["a", "ab", "abc", "b", "a\u00e9", "a~"]) await kv.set({ key, value: json(key) });
    expect(kv.list({ prefix: "a", after: "", limit: 10, values: false }).map((e) => e.key)).toEqual([
      "a",
      "ab",
      "abc",
      "a~",
      "a\u00e9",
    ]);
    expect(kv.list({ prefix: "ab", after: "ab", limit: 10, values: false }).map((e) => e.key)).toEqual(["abc"]);
  });
});

describe("KvStore group commit", () => {
  it("commits concurrent writes together and fails only the failing one", async () => {
    const { kv } = store();
    await kv.set({ key: "taken", value: json(0) });
    const results = await Promise.allSettled([
      kv.set({ key: "a", value: json(1) }),
      kv.set({ key: "taken", value: json("x"), ifVersion: 0 }),
      kv.incr("n", 5),
      kv.delete("taken", 9),
      kv.set({ key: "b", value: json(2) }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
    expect(kv.mgetWithin(["a", "taken", "n", "b"], new ResponseBudget()).map((e) => e?.value)).toEqual([1, 0, 5, 2]);
  });
});

function testLog(db: Database.Database, clock: ManualClock): ChangeLog {
  return new ChangeLog(db, clock, { enabled: true, retention: DEFAULT_CHANGE_RETENTION });
}
