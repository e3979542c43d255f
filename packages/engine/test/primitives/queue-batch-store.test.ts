import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServiceError } from "@prim/wire";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { ChangeLog, DEFAULT_CHANGE_RETENTION } from "../../src/primitives/changes/log.js";
import { type Job, QueueStore, type SendRequest } from "../../src/primitives/queue/store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A queue store over a real SQLite file, as the engine opens it (WAL). */
function open() {
  const dir = mkdtempSync(join(tmpdir(), "prim-queue-batch-"));
  dirs.push(dir);
  const db = new Database(join(dir, "queue.sqlite"));
  db.pragma("journal_mode = WAL");
  const clock = new ManualClock(1_000_000);
  return { store: new QueueStore(db, clock, testLog(db, clock)), db };
}

const request = (value: unknown, extra: Partial<SendRequest> = {}): SendRequest => ({
  body: JSON.stringify(value),
  value,
  delayMs: 0,
  priority: 0,
  maxAttempts: 5,
  dedupeKey: null,
  ...extra,
});

const rows = (db: Database.Database) => (db.prepare("SELECT count(*) AS n FROM jobs").get() as { n: number }).n;

describe("QueueStore batch send", () => {
  it("writes all of a batch or, when the disk fills up in the middle of it, none", async () => {
    const { store, db } = open();
    await store.sendMany("q", [request({ first: true })]);
    expect(rows(db)).toBe(1);

    // The file may grow by a few pages only: the batch's 50 × 8 KiB bodies run out of room
    // partway through its inserts (SQLITE_FULL, as a full disk), after some rows were written.
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 20}`);
    const big = "x".repeat(8 * 1024);
    const batch = Array.from({ length: 50 }, (_, i) => request({ i, big }));
    await expect(store.sendMany("q", batch)).rejects.toThrow(/full/i);
    expect(rows(db)).toBe(1);

    // A write sharing the same group commit is not taken down with it.
    db.pragma("max_page_count = 1073741823");
    const [after] = await store.sendMany("q", [request({ after: true })]);
    expect(after?.deduplicated).toBe(false);
    expect(rows(db)).toBe(2);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  });

  it("undoes a batch that fails midway without undoing the others of its commit", async () => {
    const { store, db } = open();
    // A statement that fails partway (as a constraint would): the batch's savepoint rolls back
    // the rows it wrote before it; the transaction, and the other writers in it, go on.
    db.exec(`CREATE TRIGGER poison BEFORE INSERT ON jobs WHEN json_extract(NEW.body, '$.poison')
             BEGIN SELECT RAISE(ABORT, 'poisoned entry'); END`);
    const before = store.send("q", request({ single: true }));
    const batch = store.sendMany(
      "q",
      Array.from({ length: 10 }, (_, i) => request({ i, poison: i === 6 })),
    );
    const after = store.sendMany("q", [request({ other: 1 }), request({ other: 2 })]);
    await expect(batch).rejects.toThrow(/poisoned entry/);
    expect((await before).job.body).toEqual({ single: true });
    expect((await after).map((s) => s.job.body)).toEqual([{ other: 1 }, { other: 2 }]);
    const bodies = db.prepare("SELECT body FROM jobs ORDER BY seq").pluck().all();
    expect(bodies).toEqual(['{"single":true}', '{"other":1}', '{"other":2}']);
  });

  it("fails every write of a group commit that SQLite rolled back, with the real cause", async () => {
    const { store, db } = open();
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 20}`);
    const big = "x".repeat(8 * 1024);
    // Both calls arrive in the same turn: one group commit runs them in one transaction, which
    // SQLITE_FULL rolls back as a whole: neither is written, both are told why.
    const small = store.sendMany("q", [request({ small: 1 }), request({ small: 2 })]);
    const huge = store.sendMany(
      "q",
      Array.from({ length: 50 }, (_, i) => request({ i, big })),
    );
    const [a, b] = await Promise.allSettled([small, huge]);
    expect(a.status === "rejected" && String(a.reason)).toMatch(/full/i);
    expect(b.status === "rejected" && String(b.reason)).toMatch(/full/i);
    expect(rows(db)).toBe(0);
    // The queue's row went with the commit; the next send records it again.
    db.pragma("max_page_count = 1073741823");
    await store.send("q", request({ again: true }));
    expect(store.counts()).toEqual([{ name: "q", ready: 1, delayed: 0, leased: 0, done: 0, dead: 0 }]);
  });

  it("settles none of an ack batch whose write fails in SQLite; refusals are per entry", async () => {
    const { store, db } = open();
    await store.sendMany("q", [request({ n: 1 }), request({ n: 2, poison: true }), request({ n: 3 })]);
    const [a, b, c] = (await store.receive("q", 3, 60_000)) as [Job, Job, Job];
    const settle = (job: Job, token = job.lease_token ?? "") => ({ job: job.id, token, action: "ack" as const });
    db.exec(`CREATE TRIGGER poison BEFORE UPDATE ON jobs WHEN json_extract(OLD.body, '$.poison')
             BEGIN SELECT RAISE(ABORT, 'poisoned settle'); END`);
    await expect(store.settleMany("q", [settle(a), settle(b), settle(c)])).rejects.toThrow(/poisoned settle/);
    expect([a, b, c].map((j) => store.get("q", j.id).status)).toEqual(["leased", "leased", "leased"]);

    db.exec("DROP TRIGGER poison");
    const out = await store.settleMany("q", [settle(a, "1.not-the-token"), settle(b), settle(c)]);
    expect(out.map((r) => (r instanceof ServiceError ? r.code : r.status))).toEqual(["conflict", "done", "done"]);
    expect(store.get("q", a.id).status).toBe("leased");
  });

  it("answers a dedupe key repeated within a batch with the job its first use made", async () => {
    const { store } = open();
    const [a, b, c] = await store.sendMany("q", [
      request(1, { dedupeKey: "k" }),
      request(2, { dedupeKey: "k" }),
      request(3, { dedupeKey: "other" }),
    ]);
    expect(a?.deduplicated).toBe(false);
    expect(b).toEqual({ job: a?.job, deduplicated: true });
    expect(c?.deduplicated).toBe(false);
  });

  it("publishes every body of a batch to every subscriber in one transaction", async () => {
    const { store, db } = open();
    await store.subscribe("t", "a");
    await store.subscribe("t", "b");
    const { delivered, queues } = await store.publishMany("t", ["1", "2", "3"]);
    expect({ delivered, queues: [...queues].sort() }).toEqual({ delivered: 2, queues: ["a", "b"] });
    expect(rows(db)).toBe(6);
    const pages = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 10}`);
    const big = JSON.stringify("y".repeat(8 * 1024));
    await expect(
      store.publishMany(
        "t",
        Array.from({ length: 20 }, () => big),
      ),
    ).rejects.toThrow(/full/i);
    expect(rows(db)).toBe(6);
  });
});

function testLog(db: Database.Database, clock: ManualClock): ChangeLog {
  return new ChangeLog(db, clock, { enabled: true, retention: DEFAULT_CHANGE_RETENTION });
}
