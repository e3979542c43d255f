// Crash safety: SIGKILL the real `prim dev` process in the middle of a stream of acknowledged
// writes to kv, queue (single and batch sends), db and storage, restart it on the same data directory, and check that
// every acknowledged write is there and every SQLite file is intact. Files are WAL with
// synchronous=NORMAL, which loses nothing acknowledged when only the process dies.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { primCommand, startPrim as runPrim } from "@prim/testkit";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { childPids, crashLeftovers, exited, gone, type WriteState, writeLanes } from "./write-lanes.js";

const LANES = 4; // concurrent requests per primitive type
const BIG = 100 * 1024; // above the 16 KiB inline limit: goes to the blob store

// pids: the SQL host processes a kill orphaned.
const { children, pids, dirs, clear } = crashLeftovers();
afterEach(clear);

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const raw = body instanceof Uint8Array;
  const res = await fetch(`${base}${path}`, {
    method,
    headers: raw
      ? { "content-type": "application/octet-stream" }
      : body === undefined
        ? {}
        : { "content-type": "application/json" },
    body: raw ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/** Object `i`: alternately 100 B (inline) and 100 KiB (blob), bytes derived from `i`. */
function objectBytes(i: number): Uint8Array {
  const bytes = new Uint8Array(i % 2 === 0 ? 100 : BIG);
  for (let j = 0; j < bytes.length; j++) bytes[j] = (i * 131 + j * 7 + (j >> 8)) & 255;
  return bytes;
}

const BATCH = 100; // entries per batch send
/** Batch `b`'s messages: 100 bodies of about 1 KiB, so a batch's transaction takes a while. */
function batchOf(b: number) {
  return Array.from({ length: BATCH }, (_, i) => ({ body: { b, i, pad: "p".repeat(1000) } }));
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Runs `write(i)` in `LANES` loops until the kill; `onAck` only after a 2xx answer arrived. */
function writer<T>(write: (i: number) => Promise<T>, onAck: (i: number, result: T) => void, state: WriteState) {
  return writeLanes(state, LANES, write, onAck);
}

/** Runs `check` over `items` with a few requests at a time. */
async function each<T>(items: T[], check: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await check(item);
    }),
  );
}

function sqliteFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".sqlite"))
    .map((f) => join(dir, f));
}

describe("prim dev crash safety", () => {
  it("keeps every acknowledged kv, queue, db and storage write across a SIGKILL, and no partial batch", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-crash-"));
    dirs.push(dir);
    const data = join(dir, "data");
    const command = primCommand();

    const first = await startPrim(command, data);
    const url = first.url;
    await call(url, "POST", "/v1/groups", { name: "crash" });
    const create = async (name: string, type: string) =>
      (await call(url, "POST", "/v1/primitives", { name, type, group: "crash" })).id as string;
    const kv = await create("k", "kv");
    const queue = await create("q", "queue");
    const db = await create("d", "db");
    const storage = await create("s", "storage");
    await call(url, "POST", `/v1/primitives/${db}/query`, { sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)" });

    const acked = {
      kv: new Set<number>(),
      queue: new Map<string, number>(), // job id → index in its body
      batches: new Map<number, string[]>(), // batch → its jobs' ids, in entry order
      db: new Set<number>(),
      storage: new Set<number>(),
    };
    const state: WriteState = { killed: false, inFlight: 0, errors: [] };
    const kvValue = (i: number) => ({ i, text: `value-${i}`.repeat(1 + (i % 5)) });
    const writers = Promise.all([
      writer(
        (i) => call(url, "PUT", `/v1/primitives/${kv}/keys/key-${i}`, { value: kvValue(i) }),
        (i) => acked.kv.add(i),
        state,
      ),
      writer(
        (i) => call(url, "POST", `/v1/primitives/${queue}/queues/jobs/messages`, { body: { i } }),
        (i, job) => acked.queue.set(job.id, i),
        state,
      ),
      writer(
        (b) => call(url, "POST", `/v1/primitives/${queue}/queues/batches/messages/batch`, { messages: batchOf(b) }),
        (b, res) =>
          acked.batches.set(
            b,
            res.data.map((job: { id: string }) => job.id),
          ),
        state,
      ),
      writer(
        (i) =>
          call(url, "POST", `/v1/primitives/${db}/query`, {
            sql: "INSERT INTO t (id, v) VALUES (?, ?)",
            params: [i, `row-${i}`],
          }),
        (i) => acked.db.add(i),
        state,
      ),
      writer(
        (i) => call(url, "PUT", `/v1/primitives/${storage}/objects/obj-${i}`, objectBytes(i)),
        (i) => acked.storage.add(i),
        state,
      ),
    ]);

    await new Promise((resolve) => setTimeout(resolve, 3000 + Math.random() * 1500));
    const pid = first.child.pid as number;
    const hosts = childPids(pid); // the db SQL host process(es)
    pids.push(...hosts);
    const inFlightAtKill = state.inFlight;
    state.killed = true;
    process.kill(pid, "SIGKILL");
    await exited(first.child);
    await writers;
    expect(state.errors).toEqual([]);
    expect(inFlightAtKill).toBeGreaterThan(0); // the kill did land mid-stream
    const counts = {
      kv: acked.kv.size,
      queue: acked.queue.size,
      batches: acked.batches.size,
      db: acked.db.size,
      storage: acked.storage.size,
    };
    console.log(`acknowledged before SIGKILL: ${JSON.stringify(counts)}, in flight: ${inFlightAtKill}`);
    for (const n of Object.values(counts)) expect(n).toBeGreaterThan(20);
    expect(acked.storage.has(1) && acked.storage.has(0)).toBe(true); // both inline and blob objects

    // An orphaned SQL host loses its IPC channel and must exit rather than linger on the file.
    for (let t = 0; t < 50 && hosts.some((h) => !gone(h)); t++) await new Promise((r) => setTimeout(r, 100));
    expect(hosts.filter((h) => !gone(h))).toEqual([]);

    // Restart on the same directory: the dead process's engine.lock is taken over.
    const second = await startPrim(command, data);
    const again = second.url;
    for (const id of [kv, queue, db, storage]) await call(again, "GET", `/v1/primitives/${id}/stats`);

    await each([...acked.kv], async (i) => {
      expect((await call(again, "GET", `/v1/primitives/${kv}/keys/key-${i}`)).value).toEqual(kvValue(i));
    });
    await each([...acked.queue], async ([job, i]) => {
      const got = await call(again, "GET", `/v1/primitives/${queue}/queues/jobs/messages/${job}`);
      expect(got).toMatchObject({ id: job, body: { i }, status: "ready" });
    });
    // Batch sends are all or nothing: every batch is whole or absent (the ones in flight at the
    // kill too), and every acknowledged one is there with its bodies in entry order.
    const byBatch = new Map<number, { id: string; i: number }[]>();
    let cursor: string | null = null;
    do {
      const page = await call(
        again,
        "GET",
        `/v1/primitives/${queue}/queues/batches/messages?limit=200${cursor === null ? "" : `&cursor=${cursor}`}`,
      );
      for (const job of page.data) {
        const list = byBatch.get(job.body.b) ?? [];
        list.push({ id: job.id, i: job.body.i });
        byBatch.set(job.body.b, list);
      }
      cursor = page.next_cursor;
    } while (cursor !== null);
    for (const [b, jobs] of byBatch) expect([b, jobs.length]).toEqual([b, BATCH]);
    for (const [b, ids] of acked.batches) {
      expect(byBatch.get(b)?.map((j) => j.id)).toEqual(ids);
      expect(byBatch.get(b)?.map((j) => j.i)).toEqual(batchOf(b).map((m) => m.body.i));
    }
    expect(byBatch.size).toBeGreaterThanOrEqual(acked.batches.size);

    const rows = (await call(again, "POST", `/v1/primitives/${db}/query`, { sql: "SELECT id, v FROM t ORDER BY id" }))
      .rows as { id: number; v: string }[];
    const stored = new Map(rows.map((r) => [r.id, r.v]));
    expect(stored.size).toBeGreaterThanOrEqual(acked.db.size);
    for (const i of acked.db) expect(stored.get(i)).toBe(`row-${i}`);
    const check = await call(again, "POST", `/v1/primitives/${db}/query`, { sql: "PRAGMA integrity_check" });
    expect(check.rows).toEqual([{ integrity_check: "ok" }]);
    await each([...acked.storage], async (i) => {
      const res = await fetch(`${again}/v1/primitives/${storage}/objects/obj-${i}`);
      expect(res.status).toBe(200);
      expect(sha(new Uint8Array(await res.arrayBuffer()))).toBe(sha(objectBytes(i)));
    });

    second.child.kill("SIGTERM");
    expect(await exited(second.child)).toBe(0);
    const files = sqliteFiles(data);
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) {
      const sqlite = new Database(file);
      try {
        expect([file, sqlite.pragma("integrity_check", { simple: true })]).toEqual([file, "ok"]);
      } finally {
        sqlite.close();
      }
    }
  });
});

/** Runs `prim dev` on `data` and waits until it listens. */
function startPrim(command: string[], data: string) {
  return runPrim(command, ["dev", "--port", "0", "--data", data], children);
}
