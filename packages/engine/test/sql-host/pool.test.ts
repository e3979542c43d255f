// The pool of SQL hosts: one db's slow statements must not hold up another db, a db's requests
// stay in order, and no host keeps a connection to a file another host replaced.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqlHostProcess } from "../../src/sql-host/host-process.js";
import { SqlHost, type SqlHostOptions } from "../../src/sql-host/pool.js";
import type { DbLocation, HostRequest } from "../../src/sql-host/protocol.js";
import { tempDir } from "../helpers.js";

/** Runs until the host kills it. */
const RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";

/** This process's child processes (the SQL hosts a pool started). */
function childPids(): Set<number> {
  const path = `/proc/${process.pid}/task/${process.pid}/children`;
  return new Set(readFileSync(path, "utf8").split(/\s+/).filter(Boolean).map(Number));
}

const pools: SqlHost[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

function setup(options: SqlHostOptions) {
  const pool = new SqlHost(options);
  pools.push(pool);
  const dir = tempDir();
  const at = (name: string, branch?: string): DbLocation => ({
    file: join(dir, `${name}.sqlite`),
    dir: join(dir, `${name}.d`),
    branch,
  });
  const exec = (db: string, sql: string, params?: unknown, tenant?: string, branch?: string) =>
    pool
      .request<{ rows: Record<string, unknown>[] }>(
        { kind: "exec", at: at(db, branch), statements: [{ sql, params }], batch: false, readOnly: false },
        tenant,
      )
      .then((r) => JSON.parse(JSON.stringify(r)) as { rows: Record<string, unknown>[] });
  const send = (db: string, req: Omit<HostRequest, "at"> & { kind: HostRequest["kind"] }) =>
    pool.request({ ...req, at: at(db) } as HostRequest);
  /** Settles to "ok" or the error code, recording `label` in `events` when it does. */
  const settle = (p: Promise<unknown>, events: string[], label: string) =>
    p.then(
      () => {
        events.push(label);
        return "ok";
      },
      (err: { code?: string }) => {
        events.push(label);
        return err.code;
      },
    );
  return { pool, exec, send, settle };
}

describe("db SQL host pool", () => {
  it("answers a write to db B while db A's slow statements occupy a host; with one host, B waits for all of A's", async () => {
    for (const size of [2, 1]) {
      const { exec, settle } = setup({ size, timeoutMs: 2000 });
      // Both hosts started (and B's table made) before the slow statements.
      await Promise.all([exec("a", "SELECT 1"), exec("b", "CREATE TABLE t (v)")]);
      const events: string[] = [];
      const slow = [1, 2].map((i) => settle(exec("a", RUNAWAY), events, `a${i}`));
      const write = settle(exec("b", "INSERT INTO t VALUES (1)"), events, "b");
      expect(await Promise.all([...slow, write])).toEqual(["invalid_request", "invalid_request", "ok"]);
      expect(events, `size ${size}`).toEqual(size === 1 ? ["a1", "a2", "b"] : ["b", "a1", "a2"]);
    }
    // Four 2 s runaways and three host (re)starts: 31 s once on a machine loaded by other suites.
  }, 90_000);

  it("keeps each db's requests in order while many dbs share the hosts", async () => {
    const { exec } = setup({ size: 3 });
    const dbs = ["a", "b", "c", "d"];
    await Promise.all(dbs.map((db) => exec(db, "CREATE TABLE t (n INTEGER)")));
    const answered: Record<string, number[]> = Object.fromEntries(dbs.map((db) => [db, []]));
    const all: Promise<unknown>[] = [];
    for (let n = 0; n < 60; n++) {
      for (const db of dbs) {
        // Each insert answers the count it saw: in order, that is n + 1.
        const p = exec(db, "INSERT INTO t VALUES (?) RETURNING (SELECT count(*) FROM t) AS c", [n]).then((r) =>
          answered[db]?.push(r.rows[0]?.c as number),
        );
        all.push(p);
      }
      // Let some answers arrive between rounds, so dbs go idle and move between hosts.
      if (n % 7 === 0) await Promise.all(all);
    }
    await Promise.all(all);
    for (const db of dbs) {
      expect(answered[db]).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      const rows = (await exec(db, "SELECT n FROM t ORDER BY rowid")).rows.map((r) => r.n);
      expect(rows).toEqual(Array.from({ length: 60 }, (_, i) => i));
    }
  });

  it("closes a db's connections on the host it leaves, so a branch replaced elsewhere never reads stale", async () => {
    // Host 1 starts while host 0 runs the first runaway, and must answer three requests before
    // that runaway is stopped: 6 s leaves room for a slow start on a loaded machine.
    const { exec, send, settle } = setup({ size: 2, timeoutMs: 6000 });
    await exec("a", "CREATE TABLE t (v TEXT)");
    await exec("a", "INSERT INTO t VALUES ('old')");
    await send("a", { kind: "branch.create", name: "b", now: 1 } as HostRequest);
    expect((await exec("a", "SELECT v FROM t", undefined, undefined, "b")).rows).toEqual([{ v: "old" }]); // host 0 opens it
    // Host 0 busy: a's requests go to host 1, which deletes and recreates the branch.
    const events: string[] = [];
    const slow = settle(exec("c", RUNAWAY), events, "slow");
    await send("a", { kind: "branch.delete", name: "b" } as HostRequest);
    await exec("a", "UPDATE t SET v = 'new'");
    await send("a", { kind: "branch.create", name: "b", now: 2 } as HostRequest);
    expect(events).toEqual([]); // all of that while host 0 was still busy
    await slow;
    // Host 1 busy now, host 0 free: a is back on host 0 and must read the new branch file.
    const again = settle(exec("d", RUNAWAY), events, "slow2");
    const onBranch = exec("a", "SELECT v FROM t", undefined, undefined, "b");
    expect((await onBranch).rows).toEqual([{ v: "new" }]);
    expect(events).toEqual(["slow"]);
    await again;
  }, 45_000);

  it("keeps a tenant to its share of hosts, so another tenant is answered while it is busy", async () => {
    const { exec, settle } = setup({ size: 3, timeoutMs: 2000, maxHostsPerTenant: 2 });
    await Promise.all([
      exec("t1", "SELECT 1", undefined, "busy"),
      exec("t2", "SELECT 1", undefined, "busy"),
      exec("t3", "SELECT 1", undefined, "busy"),
      exec("u", "CREATE TABLE t (v)", undefined, "quiet"),
    ]);
    const events: string[] = [];
    // Three dbs of one tenant, each slow: without the share they would take all three hosts.
    const slow = ["t1", "t2", "t3"].map((db) => settle(exec(db, RUNAWAY, undefined, "busy"), events, db));
    const write = settle(exec("u", "INSERT INTO t VALUES (1)", undefined, "quiet"), events, "u");
    expect(await write).toBe("ok");
    expect(events).toEqual(["u"]);
    expect(await Promise.all(slow)).toEqual(["invalid_request", "invalid_request", "invalid_request"]);
  }, 30_000);

  it("counts a db closed when its host dies of SIGTERM before the close is answered (a group shutdown)", async () => {
    const { exec, send } = setup({ size: 1, timeoutMs: 2000 });
    const before = childPids();
    await exec("a", "CREATE TABLE t (v)");
    const [host] = [...childPids()].filter((pid) => !before.has(pid));
    expect(host).toBeDefined();
    // The signal and the close leave in one turn, so the host is dead before the close reaches
    // it and the pool learns of the death only after sending it: what a Ctrl-C to the process
    // group does while the engine closes its dbs.
    process.kill(host as number, "SIGTERM");
    await expect(send("a", { kind: "close" } as HostRequest)).resolves.toEqual({ closed: true });
    // The db is usable again: the next request starts a fresh host.
    expect((await exec("a", "SELECT count(*) AS n FROM t")).rows).toEqual([{ n: 0 }]);
  }, 30_000);
});

describe("a SQL host stopped by a signal to the process group", () => {
  it("answers the close it was running as done (a gone process holds no connection) and runs what follows on a fresh one", async () => {
    const host = new SqlHostProcess(2000);
    const dir = tempDir();
    const at: DbLocation = { file: join(dir, "a.sqlite"), dir: join(dir, "a.d") };
    const exec = (sql: string) =>
      host
        .request({ kind: "exec", at, statements: [{ sql }], batch: false, readOnly: false })
        .then((r) => JSON.parse(JSON.stringify(r)) as { rows: Record<string, unknown>[] });
    try {
      const before = childPids();
      await exec("CREATE TABLE t (v)");
      const [pid] = [...childPids()].filter((p) => !before.has(p));
      expect(pid).toBeDefined();
      process.kill(pid as number, "SIGTERM");
      // Sent in the same turn as the signal: the host dies before answering it.
      const closed = host.request({ kind: "close", at });
      const after = exec("SELECT count(*) AS n FROM t");
      await expect(closed).resolves.toEqual({ closed: true });
      expect((await after).rows).toEqual([{ n: 0 }]);
    } finally {
      await host.close();
    }
  }, 30_000);
});
