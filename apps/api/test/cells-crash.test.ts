// A crash at any step of a move leaves exactly one serving copy (CLOUD.md, "Scale-out"). For each
// step in MOVE_STEPS the real `prim admin workspace move … --crash-after <step>` dies by SIGKILL
// right after it; once the freeze's lease (and the cells' grace) has passed, one cell serves the
// workspace with everything written before, through every cell; the other cell's copy is never
// opened and goes away when its cell registers; the move then runs to its end. Then the source
// cell dies in the middle of a move, or is down when it starts: the move fails cleanly or ends
// on the target, nothing is lost, the restarted source cleans up. Three cells in this process
// (cell-c is the one that dies); the movers of the crash cases are child processes.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createApiApp, readApiEnv } from "@prim/api";
import { FREEZE_GRACE_MS, MOVE_STEPS, type MoveStep, moveWorkspace } from "@prim/cells";
import { createWorkspace, openPool, type PlacementRow, readPlacement, setCellState } from "@prim/db";
import { listenInternal } from "@prim/http";
import { call, FAST_ENTERPRISE, startCells, type TestCellNode, type TestCells } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, type Exited, runPrim } from "./cell-processes.js";

const LEASE_MS = 1500;
const PRE_FLIP: readonly MoveStep[] = ["freeze", "quiesce", "pack", "unpack"];
/** Movers at once: each loads the api's sources (seconds of CPU), and CI has 2 cores. */
const PARALLEL = 2;
const CELLS = ["cell-a", "cell-b", "cell-c"];

let cells: TestCells;
let db: Awaited<ReturnType<typeof openPool>>;
/** The cells that run: startCells's, then those restarted here. */
const live = new Map<string, TestCellNode>();
/** Stopped cells, to start again. */
const stopped = new Map<string, TestCellNode>();
const node = (id: string) => live.get(id) as TestCellNode;
const running = () => [...live.values()];
const operatorEnv = () => readApiEnv({ ...cells.env, PRIM_DATA_DIR: "/nonexistent" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function stopCell(id: string): Promise<void> {
  const cell = live.get(id) as TestCellNode;
  live.delete(id);
  stopped.set(id, cell);
  if (cells.cells.includes(cell)) await cells.stopCell(id);
  else await cell.api.close();
}

/**
 * Starts a stopped cell again as a deployed one restarts: on its data directory and at its
 * addresses (PRIM_API_PORT and PRIM_INTERNAL_PORT are fixed in a deployment). Not `cells.start`,
 * which listens on new ports: the other cells would go on forwarding to the old internal address
 * for up to their cache's TTL (a cell's new address reaches no other cell's cache; see the report).
 */
async function restartCell(id: string): Promise<TestCellNode> {
  const previous = stopped.get(id) as TestCellNode;
  stopped.delete(id);
  const api = await createApiApp(readApiEnv({ ...cells.env, PRIM_CELL_ID: id, PRIM_DATA_DIR: previous.dataDir }));
  const url = await api.app.listen({ port: Number(new URL(previous.url).port), host: "127.0.0.1" });
  const internalUrl = await listenInternal(api.internal as NonNullable<typeof api.internal>, {
    port: Number(new URL(previous.internalUrl).port),
  });
  await api.cellService.announce(internalUrl);
  const restarted = { ...previous, url, internalUrl, api };
  live.set(id, restarted);
  return restarted;
}

interface Seeded {
  workspace: string;
  key: string;
  from: string;
  to: string;
  kv: string;
  db: string;
  /** kv key → value, as acknowledged. */
  values: Map<string, unknown>;
  /** Rows of `t` (x), as acknowledged. */
  rows: number[];
}

async function ok(res: Promise<{ status: number; body: any }>, what: string) {
  const answer = await res;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Workspaces made while only `on` is open: placed there. */
async function createOn(on: string, names: string[]) {
  for (const id of CELLS) await setCellState(db, id, id === on ? "open" : "closed");
  try {
    const made = [];
    for (const name of names) made.push(await createWorkspace(db, { name, ...FAST_ENTERPRISE }));
    return made;
  } finally {
    for (const id of CELLS) await setCellState(db, id, "open");
  }
}

/** A kv and a db primitive with some data, written through the workspace's own cell. */
async function seed(ws: { workspace: { id: string }; key: string }, from: string, to: string): Promise<Seeded> {
  expect((await readPlacement(db, ws.workspace.id))?.cell).toBe(from);
  const url = node(from).url;
  await ok(call(url, ws.key, "POST", "/v1/groups", { name: "app" }), "group");
  const kv = await ok(call(url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" }), "kv");
  const sqlDb = await ok(call(url, ws.key, "POST", "/v1/primitives", { name: "main", type: "db", group: "app" }), "db");
  const s: Seeded = {
    workspace: ws.workspace.id,
    key: ws.key,
    from,
    to,
    kv: kv.id,
    db: sqlDb.id,
    values: new Map(),
    rows: [],
  };
  await put(s, url, "a", 1);
  await put(s, url, "b", { nested: [1, 2, 3] });
  await sql(url, s, "CREATE TABLE t (x INTEGER)");
  await insert(s, url, 42);
  await insert(s, url, 43);
  return s;
}

async function put(s: Seeded, url: string, key: string, value: unknown) {
  await ok(call(url, s.key, "PUT", `/v1/primitives/${s.kv}/keys/${key}`, { value }), `put ${key} via ${url}`);
  s.values.set(key, value);
}

const sql = (url: string, s: Seeded, statement: string) =>
  ok(call(url, s.key, "POST", `/v1/primitives/${s.db}/query`, { sql: statement }), `${statement} via ${url}`);

async function insert(s: Seeded, url: string, x: number) {
  await sql(url, s, `INSERT INTO t VALUES (${x})`);
  s.rows.push(x);
}

/** Every acknowledged write reads back through every running cell's public URL. */
async function expectData(s: Seeded) {
  for (const c of running()) {
    for (const [key, value] of s.values) {
      const got = await call(c.url, s.key, "GET", `/v1/primitives/${s.kv}/keys/${key}`);
      expect(got.status, `${s.workspace} ${key} via ${c.id}: ${JSON.stringify(got.body)}`).toBe(200);
      expect(got.body.value, `${s.workspace} ${key} via ${c.id}`).toEqual(value);
    }
    const q = await sql(c.url, s, "SELECT x FROM t ORDER BY x");
    expect(
      (q.rows as { x: number }[]).map((r) => r.x),
      `${s.workspace} rows via ${c.id}`,
    ).toEqual([...s.rows].sort((a, b) => a - b));
  }
}

/** A new write through each running cell is read through every other. */
async function expectWritesEverywhere(s: Seeded, tag: string) {
  for (const writer of running()) {
    await put(s, writer.url, `${tag}-${writer.id}`, { tag, via: writer.id });
    for (const reader of running()) {
      const got = await call(reader.url, s.key, "GET", `/v1/primitives/${s.kv}/keys/${tag}-${writer.id}`);
      expect(got.status, `${tag}-${writer.id} via ${reader.id}`).toBe(200);
    }
  }
  await insert(s, (running()[0] as TestCellNode).url, 1000 + s.rows.length);
}

/** The files of a copy (path, size, mtime): what tells a copy nobody writes to. */
function fingerprint(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const info = statSync(path);
      if (info.isDirectory()) walk(path);
      else out.push(`${path.slice(dir.length)} ${info.size} ${info.mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

const copyOf = (cell: string, workspace: string) =>
  join((live.get(cell) ?? (stopped.get(cell) as TestCellNode)).dataDir, workspace);
const opened = (cell: string, workspace: string) => node(cell).api.tenants.openWorkspaces().includes(workspace);

interface Crash {
  seeded: Seeded;
  exited: Exited;
  /** When the mover said its freeze was done (the lease began before). */
  frozenAt: number;
  /** The lease the crashed mover held. */
  leaseMs: number;
  /** Writes sent through both cells the moment the mover died (they wait out its freeze). */
  during: Promise<unknown>;
}

const crashes = new Map<MoveStep, Crash>();

async function crashMove(step: MoveStep, seeded: Seeded, leaseMs = LEASE_MS): Promise<Crash> {
  let frozenAt = 0;
  const args = ["admin", "workspace", "move", "--workspace", seeded.workspace, "--to", seeded.to];
  args.push("--lease-ms", String(leaseMs), "--crash-after", step, "--json");
  const exited = await runPrim(args, childEnv(cells.env), {
    timeoutMs: 60_000,
    onStderrLine: (line) => {
      if (line.includes(": freeze done")) frozenAt = Date.now();
    },
  });
  // A mover starved of CPU until its lease ran out fails as documented, nothing moved (the flip
  // refuses; or the source's quiesce ended and the pack is refused): once more, a longer lease.
  const late = /lease ran out|is not quiesced/.test(exited.stderr);
  if (exited.code === 1 && late && leaseMs === LEASE_MS) return crashMove(step, seeded, 4 * LEASE_MS);
  // The moment the mover is gone: a write through each cell, waiting out the dead mover's freeze.
  const during = Promise.all(
    [seeded.from, seeded.to].map((id) => put(seeded, node(id).url, `during-${id}`, { step, via: id })),
  );
  during.catch(() => {}); // awaited by the step's test
  return { seeded, exited, frozenAt, leaseMs, during };
}

beforeAll(async () => {
  cells = await startCells("cells_crash", CELLS);
  for (const cell of cells.cells) live.set(cell.id, cell);
  db = await openPool(cells.databaseUrl);
  // One workspace per step, on cell-a and cell-b in turn (moved both ways).
  const onA = await createOn(
    "cell-a",
    MOVE_STEPS.filter((_, i) => i % 2 === 0).map((step) => `crash-${step}`),
  );
  const onB = await createOn(
    "cell-b",
    MOVE_STEPS.filter((_, i) => i % 2 === 1).map((step) => `crash-${step}`),
  );
  const seeded = new Map<MoveStep, Seeded>();
  await Promise.all(
    MOVE_STEPS.map(async (step, i) => {
      const ws = (i % 2 === 0 ? onA[i / 2] : onB[(i - 1) / 2]) as (typeof onA)[0];
      const [from, to] = i % 2 === 0 ? ["cell-a", "cell-b"] : ["cell-b", "cell-a"];
      seeded.set(step, await seed(ws, from as string, to as string));
    }),
  );
  // The movers, a few at a time; each dies right after its step.
  const queue = [...MOVE_STEPS];
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
        crashes.set(step, await crashMove(step, seeded.get(step) as Seeded));
      }
    }),
  );
  // Past every lease and the cells' grace: every dead mover's freeze is over everywhere.
  const end = Math.max(...[...crashes.values()].map((c) => c.frozenAt + c.leaseMs));
  await sleep(Math.max(0, end + FREEZE_GRACE_MS + 300 - Date.now()));
}, 150_000);

afterAll(async () => {
  await db?.end();
  for (const cell of live.values()) if (!cells.cells.includes(cell)) await cell.api.close();
  await cells?.stop();
}, 30_000);

describe("a crash at any step of a move leaves exactly one serving copy", () => {
  for (const step of MOVE_STEPS) {
    const flipped = !PRE_FLIP.includes(step);
    it(`--crash-after ${step}: ${flipped ? "the target" : "the source"} serves; the move runs again`, async () => {
      const crash = crashes.get(step) as Crash;
      const s = crash.seeded;
      const detail = `${crash.exited.stderr}\n${crash.exited.stdout}`;
      expect(crash.exited.signal, detail).toBe("SIGKILL");
      expect(crash.exited.stdout, detail).toBe("");
      expect(crash.frozenAt, detail).toBeGreaterThan(0);
      // Writes sent while the dead mover's freeze held are answered once it ends.
      await crash.during;

      const serving = flipped ? s.to : s.from;
      const other = flipped ? s.from : s.to;
      const placement = (await readPlacement(db, s.workspace)) as PlacementRow;
      expect(placement.cell).toBe(serving);
      expect(placement.frozenUntil === null || placement.frozenUntil < Date.now()).toBe(true);
      expect(placement.previousCell).toBe(step === "flip" || step === "verify" ? s.from : null);

      // The other cell's copy: the source's until it is released (flip, verify); the target's
      // unplaced one after a crash after unpack (nothing deletes it: see the report).
      const leftover = fingerprint(copyOf(other, s.workspace));
      if (step === "flip" || step === "verify" || step === "unpack") expect(leftover).not.toEqual([]);
      else expect(leftover).toEqual([]);

      await expectData(s);
      await expectWritesEverywhere(s, `after-${step}`);
      await expectData(s);
      // Only the serving cell's copy is in use: the other is neither open nor written.
      expect(existsSync(copyOf(serving, s.workspace))).toBe(true);
      expect(opened(other, s.workspace)).toBe(false);
      expect(fingerprint(copyOf(other, s.workspace))).toEqual(leftover);

      if (flipped) {
        // The source deletes its copy when it next registers (as a restart does).
        await node(s.from).api.cellService.register(node(s.from).internalUrl);
        expect(existsSync(copyOf(s.from, s.workspace))).toBe(false);
        expect((await readPlacement(db, s.workspace))?.previousCell).toBeNull();
        await expectData(s);
      }

      // The move again, to its end (before the flip: to the target; after: back).
      const report = await moveWorkspace(operatorEnv(), s.workspace, other, { leaseMs: 20_000 });
      expect(report).toMatchObject({ moved: true, from: serving, to: other, released: true });
      expect((await readPlacement(db, s.workspace))?.cell).toBe(other);
      expect(existsSync(copyOf(serving, s.workspace))).toBe(false);
      expect(existsSync(copyOf(other, s.workspace))).toBe(true);
      await expectData(s);
      await expectWritesEverywhere(s, `moved-${step}`);
      await expectData(s);
    }, 30_000);
  }
});

describe("the source cell dies in a move", () => {
  it("stopped once it has quiesced: one cell serves everything; the other copy goes when it restarts", async () => {
    const [ws] = await createOn("cell-c", ["source-dies"]);
    const s = await seed(ws as NonNullable<typeof ws>, "cell-c", "cell-a");
    let stopping: Promise<void> | undefined;
    const moved = await moveWorkspace(operatorEnv(), s.workspace, s.to, {
      leaseMs: 5000,
      log: (line) => {
        if (line.endsWith(": quiesce done")) stopping = stopCell(s.from);
      },
    }).then(
      (report) => ({ report, error: null }),
      (error: Error) => ({ report: null, error }),
    );
    await stopping;
    expect(stopping, String(moved.error)).toBeDefined();
    console.log(
      `cells-crash: source stopped after quiesce: ${moved.report === null ? `the move failed (${moved.error})` : "the move ended on the target"}`,
    );
    const placement = (await readPlacement(db, s.workspace)) as PlacementRow;
    if (moved.report !== null) {
      // The source answered up to the flip: the target serves, the source's copy waits for its restart.
      expect(moved.report).toMatchObject({ moved: true, from: s.from, to: s.to });
      expect(placement).toMatchObject({ cell: s.to, frozenUntil: null });
    } else {
      // The move failed before the flip and thawed: the source serves (once it is back).
      expect(placement).toMatchObject({ cell: s.from, frozenUntil: null, previousCell: null });
    }
    const serving = placement.cell;
    const other = serving === s.from ? s.to : s.from;
    // While the source is down every request is answered: by the target, or 500 "safe to retry".
    const down = await call(node("cell-b").url, s.key, "GET", `/v1/primitives/${s.kv}/keys/a`);
    if (serving === s.to) expect(down.body.value).toBe(1);
    else expect(down).toMatchObject({ status: 500, body: { error: { code: "internal_error" } } });

    // Restarted on its data directory: it registers and deletes a copy it no longer serves.
    await restartCell(s.from);
    expect(existsSync(copyOf(other, s.workspace)), `a copy left on ${other}`).toBe(false);
    expect((await readPlacement(db, s.workspace))?.previousCell).toBeNull();
    await expectData(s);
    await expectWritesEverywhere(s, "after-source-died");
    await expectData(s);
    expect(opened(other, s.workspace)).toBe(false);
    expect(existsSync(copyOf(serving, s.workspace))).toBe(true);
  }, 30_000);

  it("a move from a stopped cell fails cleanly; the cell restarted serves all its data", async () => {
    const [ws] = await createOn("cell-c", ["source-down"]);
    const s = await seed(ws as NonNullable<typeof ws>, "cell-c", "cell-b");
    await stopCell(s.from);
    await expect(moveWorkspace(operatorEnv(), s.workspace, s.to, { leaseMs: 5000 })).rejects.toThrow();
    const placement = (await readPlacement(db, s.workspace)) as PlacementRow;
    expect(placement).toMatchObject({ cell: s.from, frozenUntil: null, previousCell: null });
    expect(existsSync(copyOf(s.to, s.workspace))).toBe(false);

    await restartCell(s.from);
    await expectData(s);
    await expectWritesEverywhere(s, "restarted");
    expect(opened(s.to, s.workspace)).toBe(false);
    const report = await moveWorkspace(operatorEnv(), s.workspace, s.to);
    expect(report).toMatchObject({ moved: true, from: s.from, to: s.to, released: true });
    expect(existsSync(copyOf(s.from, s.workspace))).toBe(false);
    await expectData(s);
  }, 30_000);
});
