// The db outbox's guarantees below REST (engine README, "db outbox"): recovery at open, a
// repeated delivery making no second job whatever the first became, a file's copy delivering
// none of its source's messages, and the queue's records kept only as long as they may be needed.
import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { prefixedId } from "../../src/core/ids.js";
import { Engine } from "../../src/engine.js";
import { drainOutbox, markOutbox } from "../../src/primitives/db/outbox-drain.js";
import type { DbStore } from "../../src/primitives/db/store.js";
import type { QueueHandle } from "../../src/primitives/queue/handle.js";
import type { OutboxRow } from "../../src/sql-host/host-outbox.js";
import { testEngine } from "../helpers.js";

async function setup(engine: Engine) {
  const invoke = <T>(op: string, target: string | null, input: unknown) =>
    engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
  await invoke("group.create", null, { name: "app" });
  const queue = await invoke<PrimitiveInfo>("primitive.create", null, { name: "jobs", type: "queue", group: "app" });
  const db = await invoke<PrimitiveInfo>("primitive.create", null, { name: "main", type: "db", group: "app" });
  await invoke("db.query", db.id, { sql: "CREATE TABLE t (v TEXT)" });
  return { invoke, queue, db };
}

function row(source: string, queueId: string, body: unknown, now: number): OutboxRow {
  return {
    id: prefixedId("obx"),
    source,
    queue_id: queueId,
    queue: "work",
    body: JSON.stringify(body),
    delay_ms: 0,
    priority: 0,
    max_attempts: 5,
    dedupe_key: null,
    created_at: now,
  };
}

const dbStore = (engine: Engine, id: string) => engine.services.files.handle(id, "db").store as DbStore;
const queueOf = (engine: Engine, id: string) => engine.services.files.handle(id, "queue").store as QueueHandle;
const bodies = (engine: Engine, id: string) =>
  queueOf(engine, id)
    .store.list("work", undefined, 0, 100)
    .map((j) => j.body);

describe("db outbox", () => {
  it("delivers at the next open what a write left in its outbox, once", async () => {
    const { engine, clock, dataDir } = testEngine();
    const { queue, db } = await setup(engine);
    // A write whose drain never ran (the engine died after the commit).
    await markOutbox(engine.services.files, db.id);
    const message = row(db.id, queue.id, { n: 1 }, clock.now());
    await dbStore(engine, db.id).query({ sql: "INSERT INTO t VALUES ('a')" }, { readOnly: false, outbox: [message] });
    expect(bodies(engine, queue.id)).toEqual([]);
    await engine.close();

    const again = Engine.openLocal({ dataDir, clock });
    try {
      await again.outboxRecovery;
      expect(bodies(again, queue.id)).toEqual([{ n: 1 }]);
      expect(await dbStore(again, db.id).readOutbox(10)).toEqual([]);
    } finally {
      await again.close();
    }
    const third = Engine.openLocal({ dataDir, clock });
    try {
      await third.outboxRecovery;
      expect(bodies(third, queue.id)).toEqual([{ n: 1 }]);
    } finally {
      await third.close();
    }
  });

  it("makes no second job for a message delivered again, even once the job was acked and purged", async () => {
    const { engine, clock } = testEngine();
    const { queue, db } = await setup(engine);
    const { inbox, store } = queueOf(engine, queue.id);
    const message = row(db.id, queue.id, "once", clock.now());
    const [a, b] = await Promise.all([inbox.deliver(db.id, [message]), inbox.deliver(db.id, [message])]);
    expect([a?.[0]?.repeated, b?.[0]?.repeated]).toEqual([false, true]);
    expect(b?.[0]?.job).toBe(a?.[0]?.job);
    const [job] = await store.receive("work", 1, 30_000);
    await store.settle("work", { job: job?.id as string, token: job?.lease_token as string, action: "ack" });
    await store.purge("work", "done", 0);
    const later = await inbox.deliver(db.id, [message]);
    expect(later[0]).toMatchObject({ repeated: true, job: a?.[0]?.job });
    expect(bodies(engine, queue.id)).toEqual([]);
    // Another db's message with the same id is its own.
    const other = await inbox.deliver("01jzzzzzzzzzzzzzzzzzzzzzzz", [message]);
    expect(other[0]?.repeated).toBe(false);
    expect(bodies(engine, queue.id)).toEqual(["once"]);
  });

  it("forgets a record only after 7 days and once its message cannot be in the outbox", async () => {
    const { engine, clock } = testEngine();
    const { queue, db } = await setup(engine);
    const handle = engine.services.files.handle(queue.id, "queue");
    const { inbox } = handle.store as QueueHandle;
    const records = () =>
      (handle.db?.prepare("SELECT id FROM prim_outbox_seen ORDER BY id").pluck().all() ?? []) as string[];
    const first = row(db.id, queue.id, 1, clock.now());
    await inbox.deliver(db.id, [first]);
    clock.advance(6 * 86_400_000);
    const second = row(db.id, queue.id, 2, clock.now());
    await inbox.deliver(db.id, [second]);
    expect(records()).toEqual([first.id, second.id]);
    clock.advance(2 * 86_400_000);
    // Delivered again with the first (still held by the outbox after a crash): kept.
    await inbox.deliver(db.id, [first, row(db.id, queue.id, 3, clock.now())]);
    expect(records()).toHaveLength(3);
    const fourth = row(db.id, queue.id, 4, clock.now());
    await inbox.deliver(db.id, [fourth]);
    expect(records()).not.toContain(first.id);
    expect(records()).toContain(second.id); // not yet 7 days old
    expect(bodies(engine, queue.id)).toEqual([1, 2, 3, 4]);
  });

  it("delivers none of its source's messages from a fork's copy of the file", async () => {
    const { engine, clock } = testEngine();
    const { invoke, queue, db } = await setup(engine);
    await markOutbox(engine.services.files, db.id);
    await dbStore(engine, db.id).query(
      { sql: "INSERT INTO t VALUES ('a')" },
      { readOnly: false, outbox: [row(db.id, queue.id, "source's", clock.now())] },
    );
    const copy = await invoke<PrimitiveInfo>("primitive.fork", db.id, { name: "copy" });
    await invoke("db.exec", copy.id, {
      sql: "INSERT INTO t VALUES ('b')",
      enqueue: [{ primitive: "jobs", queue: "work", body: "copy's" }],
    });
    expect(bodies(engine, queue.id)).toEqual(["copy's"]);
    expect(await dbStore(engine, copy.id).readOutbox(10)).toEqual([]);
    await invoke("db.exec", db.id, {
      sql: "INSERT INTO t VALUES ('c')",
      enqueue: [{ primitive: "jobs", queue: "work", body: "source's second" }],
    });
    expect(bodies(engine, queue.id)).toEqual(["copy's", "source's", "source's second"]);
  });

  it("sends nothing twice after a restore brings back a message it delivered", async () => {
    const { engine, clock } = testEngine();
    const { invoke, queue, db } = await setup(engine);
    await invoke("db.exec", db.id, {
      sql: "INSERT INTO t VALUES ('warm')",
      enqueue: [{ primitive: "jobs", queue: "work", body: "first" }],
    });
    // A snapshot taken while a message waited (between a commit and its delivery).
    await dbStore(engine, db.id).query(
      { sql: "INSERT INTO t VALUES ('a')" },
      { readOnly: false, outbox: [row(db.id, queue.id, "waiting", clock.now())] },
    );
    await invoke("primitive.snapshot", db.id, { name: "mid" });
    await drainOutbox(engine.services, db.id);
    expect(bodies(engine, queue.id)).toEqual(["first", "waiting"]);
    await invoke("primitive.restore", db.id, { snapshot: "mid" });
    expect((await dbStore(engine, db.id).readOutbox(10)).map((r) => JSON.parse(r.body))).toEqual(["waiting"]);
    // The next write that enqueues reads the outbox again (the file was replaced): the message
    // is known to its queue and only deleted.
    await invoke("db.exec", db.id, {
      sql: "INSERT INTO t VALUES ('b')",
      enqueue: [{ primitive: "jobs", queue: "work", body: "after" }],
    });
    expect(bodies(engine, queue.id)).toEqual(["first", "waiting", "after"]);
    expect(await dbStore(engine, db.id).readOutbox(10)).toEqual([]);
  });

  it("delivers in a durable engine once the write's and the queue's commits are synced", async () => {
    const { engine } = testEngine({ durability: "durable" });
    const { invoke, queue, db } = await setup(engine);
    const before = engine.services.syncs.fsyncs;
    await invoke("db.exec", db.id, {
      sql: "INSERT INTO t VALUES ('a')",
      enqueue: [{ primitive: "jobs", queue: "work", body: "durable" }],
    });
    expect(bodies(engine, queue.id)).toEqual(["durable"]);
    // At least the db's round and the queue's round before the outbox let go of the message.
    expect(engine.services.syncs.fsyncs - before).toBeGreaterThanOrEqual(2);
  });
});
