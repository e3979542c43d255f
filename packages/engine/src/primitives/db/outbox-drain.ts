import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PrimitiveRecord } from "../../catalog/catalog.js";
import type { OutboxRow } from "../../sql-host/host-outbox.js";
import { fsyncPath } from "../../sqlite/durable-sync.js";
import { privateDir } from "../../sqlite/private-files.js";
import type { PrimitiveFiles } from "../files.js";
import type { QueueHandle } from "../queue/handle.js";
import type { EngineServices } from "../services.js";
import type { DbStore } from "./store.js";

/**
 * Moving a db's outbox into its queues (engine README, "db outbox"), after each write that
 * enqueued and at every start for the dbs that ever did. One drain per db at a time: oldest
 * messages first, 100 at a time, each queue's share delivered in one queue transaction that
 * also records what it took (queue/inbox.ts), then — only then — deleted from the outbox. A
 * crash between the two leaves the messages in the outbox; the next drain finds the queue's
 * record and makes no second job.
 */
const READ_LIMIT = 100;
/** A drain that failed (not one cut short by closing) is tried again this much later. */
const RETRY_MS = 5_000;

interface Drains {
  running: Map<string, Promise<void>>;
  /**
   * Dbs whose outbox this process saw empty (a drain read it to the end) and has not failed to
   * drain since: their writes' messages are delivered as handed in, without a read. Per open
   * store and its generation: a file replaced since (a restore, a promote) is read again.
   */
  clean: WeakMap<DbStore, number>;
  /** Dbs whose marker is known to exist. */
  marked: Set<string>;
}
const drainsOf = new WeakMap<PrimitiveFiles, Drains>();

function drains(files: PrimitiveFiles): Drains {
  let state = drainsOf.get(files);
  if (state === undefined) {
    state = { running: new Map(), clean: new WeakMap(), marked: new Set() };
    drainsOf.set(files, state);
  }
  return state;
}

/** `<id>.d/outbox`: this db has (or had) an outbox, so a start looks into it. */
const markerOf = (files: PrimitiveFiles, id: string) => join(files.auxDir(id), "outbox");

/**
 * Makes the marker before the first write that enqueues (and fsyncs its directory): a start
 * after a crash then knows to drain this db without opening every db of the workspace.
 */
export async function markOutbox(files: PrimitiveFiles, id: string): Promise<void> {
  const state = drains(files);
  if (state.marked.has(id)) return;
  const marker = markerOf(files, id);
  if (!existsSync(marker)) {
    const dir = privateDir(files.auxDir(id));
    writeFileSync(marker, "", { mode: 0o600 });
    await fsyncPath(dir);
  }
  state.marked.add(id);
}

/** Test hook (crash tests only): the engine kills itself at this point of a drain. */
function crashPoint(point: "before-deliver" | "after-deliver"): void {
  if (process.env.PRIM_TEST_OUTBOX_KILL === point) process.kill(process.pid, "SIGKILL");
}

/**
 * Drains db `id`'s outbox; resolves when it is empty (or the engine is closing). `known`: the
 * messages a write just committed, delivered without reading them back — the outbox is read
 * only when it may hold others (at start, after a failure). Calls for the same db run one after
 * another. Never rejects: a failure is retried later (`RETRY_MS`) and the messages stay in the
 * outbox meanwhile.
 */
export function drainOutbox(services: EngineServices, id: string, known?: OutboxRow[]): Promise<void> {
  const state = drains(services.files);
  const before = state.running.get(id) ?? Promise.resolve();
  const next = before.then(async () => {
    try {
      // A deleted db has nothing left to deliver from.
      const db = await record(services, id);
      if (db === null || db.type !== "db" || closing(services)) return;
      const store = services.files.handle(id, "db").store as DbStore;
      const generation = store.generation;
      const clean = state.clean.get(store) === generation;
      state.clean.delete(store); // until every message is delivered and deleted
      const done = known !== undefined && clean ? await deliverRows(services, id, known) : await drainNow(services, id);
      if (done && store.generation === generation) state.clean.set(store, generation);
    } catch {
      if (services.files.changeSignals.closed) return;
      setTimeout(() => void drainOutbox(services, id), RETRY_MS).unref();
    }
  });
  state.running.set(id, next);
  void next.then(() => {
    if (state.running.get(id) === next) state.running.delete(id);
  });
  return next;
}

const closing = (services: EngineServices) => services.files.changeSignals.closed;

async function record(services: EngineServices, id: string): Promise<PrimitiveRecord | null> {
  return services.catalog.cachedPrimitive?.(id) ?? (await services.catalog.getPrimitive(id));
}

/** Reads and delivers until the outbox is empty: true then, false when cut short (closing). */
async function drainNow(services: EngineServices, id: string): Promise<boolean> {
  for (;;) {
    if (closing(services)) return false;
    const db = await record(services, id);
    if (db === null || db.type !== "db") return true; // deleted since
    if (closing(services)) return false;
    const store = services.files.handle(id, "db").store as DbStore;
    const rows = await store.readOutbox(READ_LIMIT);
    if (rows.length === 0) return true;
    if (!(await deliverRows(services, id, rows))) return false;
    if (rows.length < READ_LIMIT) return true;
  }
}

/**
 * Delivers `rows` (of db `id`'s outbox, in id order) into their queues, then deletes them from
 * the outbox: true once done, false when cut short by closing.
 */
async function deliverRows(services: EngineServices, id: string, rows: OutboxRow[]): Promise<boolean> {
  if (closing(services)) return false;
  const db = await record(services, id);
  if (db === null || db.type !== "db") return true; // deleted since: nothing left to deliver from
  crashPoint("before-deliver");
  const byQueue = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    // A copy of the file (a fork, an import) holds its source's messages: not its to send.
    const key = row.source === id ? row.queue_id : "";
    byQueue.set(key, [...(byQueue.get(key) ?? []), row]);
  }
  const done: string[] = [];
  for (const [queueId, list] of byQueue) {
    const queue = queueId === "" ? null : await record(services, queueId);
    // A queue deleted or moved out of the db's group since the write: nowhere to deliver.
    if (queue !== null && queue.type === "queue" && queue.group_id === db.group_id) {
      if (closing(services)) return false;
      const handle = services.files.handle(queue.id, "queue").store as QueueHandle;
      await handle.inbox.deliver(id, list);
      // A durable queue's jobs are on disk before the outbox lets go of them.
      await services.files.synced(queue);
    }
    for (const row of list) done.push(row.id);
  }
  crashPoint("after-deliver");
  if (closing(services)) return false;
  await (services.files.handle(id, "db").store as DbStore).deleteOutbox(done);
  return true;
}

/**
 * At start: drains every db of the workspace that has an outbox marker (what a crash left
 * between a commit and its delivery). Resolves when all are drained.
 */
export async function recoverOutboxes(services: EngineServices): Promise<void> {
  let after: string | undefined;
  for (;;) {
    if (closing(services)) return;
    const page = await services.catalog.listPrimitives({ type: "db", after, limit: 500 });
    for (const p of page) {
      if (existsSync(markerOf(services.files, p.id))) await drainOutbox(services, p.id);
    }
    if (page.length < 500) return;
    after = page.at(-1)?.id;
  }
}
