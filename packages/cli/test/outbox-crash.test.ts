// The db outbox through a SIGKILL (engine README, "db outbox"): the real `prim dev` is killed at
// a point of the drain by its test hook (PRIM_TEST_OUTBOX_KILL) — after the write committed and
// before anything reached the queue, or after the queue took the message and before the outbox
// let go of it — and restarted on the same directory: the message is in its queue exactly once.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { primCommand, type RunningPrim, startPrim } from "@prim/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { childPids, crashLeftovers, exited, gone, type WriteState, writeLanes } from "./write-lanes.js";

const { children, pids, dirs, clear } = crashLeftovers();
afterEach(clear);

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** `prim dev` on `data`, with the outbox's kill point when given. */
function start(data: string, kill?: string): Promise<RunningPrim> {
  const env = { ...process.env };
  if (kill === undefined) delete env.PRIM_TEST_OUTBOX_KILL;
  else env.PRIM_TEST_OUTBOX_KILL = kill;
  return startPrim(primCommand(), ["dev", "--port", "0", "--data", data], children, env);
}

/** Waits until the process is gone (SIGKILLed by its own hook), reaping its SQL hosts' pids. */
async function killed(child: ChildProcess, hosts: number[]): Promise<void> {
  await exited(child);
  expect(child.signalCode).toBe("SIGKILL");
  for (let t = 0; t < 50 && hosts.some((h) => !gone(h)); t++) await new Promise((r) => setTimeout(r, 100));
}

/** Polls until `ready` answers true (the start's recovery drains in the background). */
async function until(ready: () => Promise<boolean>): Promise<void> {
  for (let t = 0; t < 200; t++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the outbox was not drained");
}

async function setup(url: string) {
  await call(url, "POST", "/v1/groups", { name: "shop" });
  const create = async (name: string, type: string) =>
    (await call(url, "POST", "/v1/primitives", { name, type, group: "shop" })).id as string;
  const queue = await create("jobs", "queue");
  const db = await create("orders", "db");
  await call(url, "POST", `/v1/primitives/${db}/query`, {
    sql: "CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)",
  });
  return { queue, db };
}

/** The write that enqueues: the process dies while answering it. */
async function writeAndDie(first: RunningPrim, db: string): Promise<void> {
  const hosts = childPids(first.child.pid as number);
  pids.push(...hosts);
  const answer = call(first.url, "POST", `/v1/primitives/${db}/query`, {
    sql: "INSERT INTO orders (item) VALUES ('book')",
    enqueue: [{ primitive: "jobs", queue: "work", body: { order: "book" } }],
  }).then(
    () => "answered",
    () => "no answer",
  );
  await killed(first.child, hosts);
  expect(await answer).toBe("no answer");
}

async function state(url: string, db: string, queue: string) {
  const rows = (await call(url, "POST", `/v1/primitives/${db}/query`, { sql: "SELECT item FROM orders" })).rows;
  const outbox = (
    await call(url, "POST", `/v1/primitives/${db}/query`, { sql: "SELECT count(*) AS n FROM _prim_outbox" })
  ).rows[0].n as number;
  const jobs = (await call(url, "GET", `/v1/primitives/${queue}/queues/work/messages`)).data as { body: unknown }[];
  return { rows, outbox, jobs: jobs.map((j) => j.body) };
}

describe("db outbox through SIGKILL", () => {
  it("delivers a message whose write committed before the kill, once, at the next start", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-outbox-"));
    dirs.push(dir);
    const data = join(dir, "data");
    const first = await start(data, "before-deliver");
    const { queue, db } = await setup(first.url);
    await writeAndDie(first, db);

    const second = await start(data);
    await until(async () => (await state(second.url, db, queue)).outbox === 0);
    expect(await state(second.url, db, queue)).toEqual({
      rows: [{ item: "book" }],
      outbox: 0,
      jobs: [{ order: "book" }],
    });
    second.child.kill("SIGTERM");
    expect(await exited(second.child)).toBe(0);
  });

  it("makes no second job when killed after the queue took it, again during recovery", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-outbox-"));
    dirs.push(dir);
    const data = join(dir, "data");
    const first = await start(data, "after-deliver");
    const { queue, db } = await setup(first.url);
    await writeAndDie(first, db);

    // The start's recovery finds the message still in the outbox, delivers it again (the queue
    // knows it: nothing new) and is killed again before letting go of it.
    const second = start(data, "after-deliver").catch(() => undefined);
    const child = children.at(-1) as ChildProcess;
    await killed(child, []);
    await second;

    const third = await start(data);
    await until(async () => (await state(third.url, db, queue)).outbox === 0);
    expect(await state(third.url, db, queue)).toEqual({
      rows: [{ item: "book" }],
      outbox: 0,
      jobs: [{ order: "book" }],
    });
    // Later writes still enqueue, once each.
    await call(third.url, "POST", `/v1/primitives/${db}/query`, {
      sql: "INSERT INTO orders (item) VALUES ('pen')",
      enqueue: [{ primitive: "jobs", queue: "work", body: { order: "pen" } }],
    });
    expect((await state(third.url, db, queue)).jobs).toEqual([{ order: "book" }, { order: "pen" }]);
    third.child.kill("SIGTERM");
    expect(await exited(third.child)).toBe(0);
  });

  it("keeps rows and jobs one to one through repeated SIGKILLs under load, rolled-back batches sending none", {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-outbox-"));
    dirs.push(dir);
    const data = join(dir, "data");
    let prim = await start(data);
    const { queue, db } = await setup(prim.url);
    await call(prim.url, "POST", `/v1/primitives/${db}/query`, {
      sql: "CREATE UNIQUE INDEX one_item ON orders (item)",
    });
    await call(prim.url, "POST", `/v1/primitives/${db}/query`, {
      sql: "INSERT INTO orders (id, item) VALUES (-1, 'seed')",
    });
    const acked = new Set<number>();
    let next = 0;
    for (let round = 0; round < 3; round++) {
      const url = prim.url;
      const load: WriteState = { killed: false, inFlight: 0, errors: [] };
      // Every fifth write is a batch whose second statement fails: it must send nothing.
      const write = async (): Promise<number> => {
        const i = next++;
        const enqueue = [{ primitive: "jobs", queue: "work", body: { i } }];
        const insert = { sql: "INSERT INTO orders (id, item) VALUES (?, ?)", params: [i, `item-${i}`] };
        if (i % 5 !== 0) {
          await call(url, "POST", `/v1/primitives/${db}/batch`, { statements: [insert], enqueue });
          return i;
        }
        const res = await fetch(`${url}/v1/primitives/${db}/batch`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ statements: [insert, { sql: "INSERT INTO orders (item) VALUES ('seed')" }], enqueue }),
        });
        if (res.status !== 409) throw new Error(`a failing batch answered ${res.status}`);
        return -1;
      };
      const writers = writeLanes(load, 4, write, (_, i) => {
        if (i >= 0) acked.add(i);
      });
      await new Promise((resolve) => setTimeout(resolve, 1000 + Math.random() * 1000));
      const hosts = childPids(prim.child.pid as number);
      pids.push(...hosts);
      load.killed = true;
      prim.child.kill("SIGKILL");
      await killed(prim.child, hosts);
      await writers;
      expect(load.errors).toEqual([]);
      prim = await start(data);
    }
    const url = prim.url;
    await until(async () => (await state(url, db, queue)).outbox === 0);
    const rows = (
      await call(url, "POST", `/v1/primitives/${db}/query`, { sql: "SELECT id FROM orders WHERE id >= 0" })
    ).rows.map((r: { id: number }) => r.id) as number[];
    const bodies: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { body: { i: number } }[]; next_cursor: string | null } = await call(
        url,
        "GET",
        `/v1/primitives/${queue}/queues/work/messages?limit=200${cursor === null ? "" : `&cursor=${cursor}`}`,
      );
      bodies.push(...page.data.map((j) => j.body.i));
      cursor = page.next_cursor;
    } while (cursor !== null);
    console.log(`outbox under SIGKILL: ${acked.size} writes acknowledged, ${rows.length} rows, ${bodies.length} jobs`);
    expect(acked.size).toBeGreaterThan(20);
    for (const i of acked) expect(rows).toContain(i);
    expect(rows.filter((i) => i % 5 === 0)).toEqual([]);
    // One job per committed row, none for a write that did not commit, none twice.
    expect([...bodies].sort((a, b) => a - b)).toEqual([...rows].sort((a, b) => a - b));
    prim.child.kill("SIGTERM");
    expect(await exited(prim.child)).toBe(0);
  });
});
