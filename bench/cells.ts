// cells benchmark: kv GET of a small value through HAProxy in front of the cells (issue 43: the
// edge routes by the key's workspace tag, straight to the owner) against the same GET sent to
// the owning cell directly, in the same run, same shape. Each cell is an apps/api process of its
// own (cells-server.ts); HAProxy is Debian's, started by @prim/cells `startEdge`. Target: through
// HAProxy keeps ≥ 0.8× of direct's req/s.
// Informational phases: through a cell that does not serve the workspace (one Node forwarding
// hop to the owner's internal listener: what the edge's fallback and a stale map cost), and
// through a bare forwarder (node:http + the cells' `forwardRequest`, no apps/api in front), to
// tell the hop's own cost from the entry cell's.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { backendName, type Edge, startEdge } from "@prim/cells";
import { freePort } from "@prim/testkit";
import { checkOnlyOwnerHasFiles, placeWorkspace, startCluster } from "./lib/cells-cluster.js";
import { benchSeconds } from "./lib/knobs.js";
import { failOnErrors, type Measured, measureSlice, mergeSlices, type Phase, type Slice } from "./lib/load.js";
import { printRatio } from "./lib/verdict.js";

/** Issue 43 (fixed before its first run): through HAProxy to the owner ≥ 0.8× direct to the owner. */
export const TARGET_HAPROXY = 0.8;
const CONNECTIONS = 50;
/** Slices per phase; the order reverses every round (A B C C B A …), so no phase always goes first. */
const ROUNDS = 4;
const VALUE = "small value of 32 bytes, cells!!"; // 32 characters, the kv value of key `k`

const PHASES = ["cells_direct", "cells_haproxy", "cells_forwarded", "cells_proxy"] as const;
type PhaseName = (typeof PHASES)[number];
/** The processes whose CPU is read: the owning cell, the other cell, the bare forwarder, HAProxy. */
const PROCESSES = ["owner", "entry", "proxy", "haproxy"] as const;
type ProcessName = (typeof PROCESSES)[number];
/** Which process the load generator talks to in each phase, besides the owner. */
const FRONT: Record<PhaseName, ProcessName | null> = {
  cells_direct: null,
  cells_haproxy: "haproxy",
  cells_forwarded: "entry",
  cells_proxy: "proxy",
};

/** One slice's CPU (µs) of each process, and of the whole machine (busy and total, all cores). */
type SliceCpu = Record<ProcessName, number> & { machineBusy: number; machineTotal: number };

interface PhaseCpu {
  /** Fractions of one core over the measured time. */
  share: Record<ProcessName, number>;
  /** Busy share of the whole machine (all cores, every process: Postgres, Redis, neighbours). */
  machine: number;
  /** CPU µs per 2xx response in each process. */
  perRequest: Record<ProcessName, number>;
}

function machineTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    const all = times.user + times.nice + times.sys + times.idle + times.irq;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
}

/**
 * The CPU readings around one measured slice. `measureSlice` calls its `serverCpuMicros` twice
 * per slice (when autocannon starts, and after it ends), never during a warm-up; each call here
 * reads every process and the machine, and `take` answers the difference of the two.
 */
function cpuProbe(processes: Record<ProcessName, { cpuMicros(): Promise<number> }>) {
  type Reading = Record<ProcessName, number> & { busy: number; total: number };
  let readings: (Reading | null)[] = [];
  return {
    reset() {
      readings = [];
    },
    async read(): Promise<number> {
      const i = readings.length;
      readings.push(null);
      const { busy, total } = machineTimes();
      const [owner, entry, proxy, haproxy] = await Promise.all(PROCESSES.map((p) => processes[p].cpuMicros()));
      const reading = {
        owner: owner ?? Number.NaN,
        entry: entry ?? Number.NaN,
        proxy: proxy ?? Number.NaN,
        haproxy: haproxy ?? Number.NaN,
      };
      readings[i] = { ...reading, busy, total };
      return reading.owner + reading.entry + reading.proxy + reading.haproxy;
    },
    take(): SliceCpu {
      const [a, b] = readings;
      if (a == null || b == null) throw new Error("cpu probe: a slice was not read twice");
      return {
        owner: b.owner - a.owner,
        entry: b.entry - a.entry,
        proxy: b.proxy - a.proxy,
        haproxy: b.haproxy - a.haproxy,
        machineBusy: b.busy - a.busy,
        machineTotal: b.total - a.total,
      };
    },
  };
}

function phaseCpu(slices: readonly Slice[], cpu: readonly SliceCpu[]): PhaseCpu {
  const sum = <T>(xs: readonly T[], f: (x: T) => number) => xs.reduce((n, x) => n + f(x), 0);
  const wall = sum(slices, (s) => s.wallMicros);
  const ok = sum(slices, (s) => s.ok);
  const used = (p: ProcessName) => sum(cpu, (c) => c[p]);
  const each = (f: (micros: number) => number) =>
    Object.fromEntries(PROCESSES.map((p) => [p, f(used(p))])) as Record<ProcessName, number>;
  return {
    share: each((micros) => micros / wall),
    machine: sum(cpu, (c) => c.machineBusy) / sum(cpu, (c) => c.machineTotal),
    perRequest: each((micros) => micros / ok),
  };
}

function printTable(rows: readonly { m: Measured<PhaseName>; cpu: PhaseCpu }[]): void {
  const head = ["phase".padEnd(15), "   req/s", "  p50 ms", "  p99 ms", "     2xx", "non2xx", "errors"];
  head.push(
    "owner CPU",
    "entry CPU",
    "proxy CPU",
    "haproxy CPU",
    "loadgen CPU",
    "machine",
    "owner µs/req",
    "front µs/req",
  );
  console.log(`\n${head.join("  ")}`);
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  for (const { m, cpu } of rows) {
    const front = FRONT[m.name];
    const cells = [m.name.padEnd(15), m.rps.toFixed(0).padStart(8), m.p50.toFixed(2).padStart(8)];
    cells.push(m.p99.toFixed(2).padStart(8), String(m.ok).padStart(8), String(m.non2xx).padStart(6));
    cells.push(String(m.errors + m.timeouts).padStart(6));
    cells.push(...PROCESSES.map((p) => pct(cpu.share[p]).padStart(p === "haproxy" ? 11 : 9)));
    cells.push(pct(m.loadCpu).padStart(11), pct(cpu.machine).padStart(7));
    cells.push(cpu.perRequest.owner.toFixed(0).padStart(12));
    cells.push((front === null ? "-" : cpu.perRequest[front].toFixed(0)).padStart(12));
    console.log(cells.join("  "));
  }
  console.log("");
}

export async function run(): Promise<void> {
  const durationSeconds = benchSeconds(10);
  const warmupSeconds = Math.min(2, durationSeconds);
  const cluster = await startCluster(["cell-a", "cell-b"]);
  const edgeDir = mkdtempSync(join(tmpdir(), "prim-bench-edge-"));
  let edge: Edge | undefined;
  // Ctrl-C: the children, the database and the temp directory go too.
  const interrupted = (signal: NodeJS.Signals) => {
    console.error(`cells: ${signal}, cleaning up`);
    void Promise.allSettled([edge?.close(), cluster.stop()]).finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    const placed = await placeWorkspace(cluster, VALUE);
    const { owner, entry } = placed;
    const proxy = await cluster.startProxy(owner);
    edge = await startEdge({
      databaseUrl: cluster.databaseUrl,
      cells: cluster.cells.map((c) => ({ id: c.id, url: c.url })),
      bind: { host: "127.0.0.1", port: await freePort() },
      dir: edgeDir,
    });
    const started = edge;
    await checkEdgeRoutes(edge.url, placed.key, placed.path, owner.id);
    console.log(`cells bench: kv GET of a ${VALUE.length}-character value, workspace placed on ${owner.id}`);
    console.log(`  cells_direct to ${owner.id}; cells_forwarded through ${entry.id} (one hop to ${owner.id})`);
    console.log(`  cells_haproxy through HAProxy (one thread), routed by the key's workspace tag to ${owner.id}`);
    console.log(`  cells_proxy (diagnostic) through a bare node:http server calling forwardRequest to ${owner.id}`);
    console.log(
      `  each cell and the forwarder a process of its own; ${cpus().length} cores for all, load generator and Postgres`,
    );
    console.log(
      `  ${CONNECTIONS} connections, pipelining 1; ${warmupSeconds}s warm-up + ${durationSeconds}s measured per phase, in ${ROUNDS} slices`,
    );
    const requests = [
      { method: "GET" as const, path: placed.path, headers: { authorization: `Bearer ${placed.key}` } },
    ];
    const url: Record<PhaseName, string> = {
      cells_direct: owner.url,
      cells_haproxy: edge.url,
      cells_forwarded: entry.url,
      cells_proxy: proxy.url,
    };
    const phases: Phase<PhaseName>[] = PHASES.map((name) => ({ name, url: url[name], requests }));

    const probe = cpuProbe({ owner, entry, proxy, haproxy: { cpuMicros: async () => started.cpuMicros() } });
    const slices = new Map<PhaseName, Slice[]>(PHASES.map((p) => [p, []]));
    const cpu = new Map<PhaseName, SliceCpu[]>(PHASES.map((p) => [p, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? phases : [...phases].reverse();
      for (const phase of order) {
        const warmup = round === 0 ? warmupSeconds : warmupSeconds / 4; // each phase's first slice: full warm-up
        probe.reset();
        const slice = await measureSlice(
          phase,
          { connections: CONNECTIONS, serverCpuMicros: () => probe.read() },
          warmup,
          durationSeconds / ROUNDS,
        );
        slices.get(phase.name)?.push(slice);
        cpu.get(phase.name)?.push(probe.take());
        console.log(`measured ${phase.name} (${round + 1}/${ROUNDS})`);
      }
    }
    checkOnlyOwnerHasFiles(placed);

    const rows = phases.map((p) => ({
      m: mergeSlices(p.name, slices.get(p.name) ?? []),
      cpu: phaseCpu(slices.get(p.name) ?? [], cpu.get(p.name) ?? []),
    }));
    printTable(rows);
    for (const { m, cpu: c } of rows) {
      console.log(`RESULT ${m.name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${m.name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${m.name}_p99 ${m.p99.toFixed(2)} ms`);
      console.log(`RESULT ${m.name}_owner_cpu_per_req ${c.perRequest.owner.toFixed(0)} µs`);
      const front = FRONT[m.name];
      if (front !== null) console.log(`RESULT ${m.name}_front_cpu_per_req ${c.perRequest[front].toFixed(0)} µs`);
    }
    const rps = (name: PhaseName) => rows.find((r) => r.m.name === name)?.m.rps ?? 0;
    const ratio = (name: PhaseName) => (rps("cells_direct") > 0 ? rps(name) / rps("cells_direct") : 0);
    printRatio("cells_haproxy_vs_direct", ratio("cells_haproxy"), TARGET_HAPROXY);
    // Informational since issue 43: HAProxy is the path; a Node hop is the fallback's and a stale map's.
    printRatio("cells_forwarded_vs_direct", ratio("cells_forwarded"), null);
    printRatio("cells_proxy_vs_direct", ratio("cells_proxy"), null);
    failOnErrors(Object.fromEntries(rows.map((r) => [r.m.name, r.m])));
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    await edge?.close();
    await cluster.stop();
    rmSync(edgeDir, { recursive: true, force: true });
  }
}

/** The edge must send the bench's GET to the owner, with no Node hop (else the phase measures the wrong path). */
async function checkEdgeRoutes(url: string, key: string, path: string, owner: string): Promise<void> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await res.text();
  const routed = { status: res.status, edge: res.headers.get("x-prim-edge"), cell: res.headers.get("x-prim-cell") };
  const via = res.headers.get("x-prim-via");
  if (routed.status !== 200 || routed.edge !== backendName(owner) || routed.cell !== owner || via !== null) {
    throw new Error(`HAProxy did not route the GET straight to ${owner}: ${JSON.stringify({ ...routed, via })}`);
  }
}
