// Load generation with autocannon (in-process), plus the figures a phase reports.
import autocannon from "autocannon";
import { printFail } from "./verdict.js";

export interface Phase<Name extends string = string> {
  name: Name;
  url: string;
  requests: autocannon.Request[];
}

export interface Measured<Name extends string = string> {
  name: Name;
  /** Responses per second of measured time (all slices of the phase). */
  rps: number;
  /** Latency percentiles in ms over 2xx responses, from autocannon's float response times. */
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Fraction of one core used by the server process during the phase. */
  serverCpu: number;
  /** Fraction of one core used by this (load-generating) process during the phase. */
  loadCpu: number;
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  /** Total CPU time (µs, user + system) the server process has used so far. */
  serverCpuMicros: () => Promise<number>;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Fired {
  result: autocannon.Result;
  latencies: Float64Array;
  /** Wall time (µs) and this process's CPU time (µs) from autocannon's `start` (after it has
   * built every connection's requests) to its completion. */
  wallMicros: number;
  loadCpuMicros: number;
}

/** One autocannon run. autocannon's own latency histogram has 1 ms resolution, so collect ours. */
function fire(phase: Phase, connections: number, duration: number, onStart: () => void = () => {}) {
  return new Promise<Fired>((resolve, reject) => {
    const samples: number[] = [];
    let t0 = performance.now();
    let cpu0 = process.cpuUsage();
    const opts: autocannon.Options = { url: phase.url, connections, pipelining: 1, duration, requests: phase.requests };
    const instance = autocannon(opts, (err: unknown, result: autocannon.Result) => {
      const wallMicros = (performance.now() - t0) * 1000;
      const cpu = process.cpuUsage(cpu0);
      if (err) reject(err);
      else
        resolve({
          result,
          latencies: Float64Array.from(samples).sort(),
          wallMicros,
          loadCpuMicros: cpu.user + cpu.system,
        });
    });
    instance.on("start", () => {
      t0 = performance.now();
      cpu0 = process.cpuUsage();
      onStart();
    });
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) samples.push(ms);
    });
  });
}

/** Measured seconds of each phase are split into this many slices, run in turn (A, B, A, B). */
export const ROUNDS = 2;

/** One measured autocannon run: raw counts, summed over slices by `mergeSlices`. */
export interface Slice {
  responses: number;
  latencies: Float64Array;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  wallMicros: number;
  serverCpuMicros: number;
  loadCpuMicros: number;
}

/** A discarded warm-up run of `warmupSeconds`, then a measured run of `seconds`. */
export async function measureSlice(
  phase: Phase,
  options: Pick<LoadOptions, "connections" | "serverCpuMicros">,
  warmupSeconds: number,
  seconds: number,
): Promise<Slice> {
  if (warmupSeconds > 0) await fire(phase, options.connections, warmupSeconds);
  let server0: Promise<number> = Promise.resolve(Number.NaN);
  const run = await fire(phase, options.connections, seconds, () => {
    server0 = options.serverCpuMicros();
  });
  const server1 = await options.serverCpuMicros();
  const { result } = run;
  return {
    responses: result.requests.total,
    latencies: run.latencies,
    ok: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    wallMicros: run.wallMicros,
    serverCpuMicros: server1 - (await server0),
    loadCpuMicros: run.loadCpuMicros,
  };
}

/** Slices of one phase as one measurement: rates over the summed measured time. */
export function mergeSlices<Name extends string>(name: Name, slices: readonly Slice[]): Measured<Name> {
  const sum = (f: (s: Slice) => number) => slices.reduce((n, s) => n + f(s), 0);
  const wall = sum((s) => s.wallMicros);
  const latencies = Float64Array.from(slices.flatMap((s) => Array.from(s.latencies))).sort();
  return {
    name,
    rps: sum((s) => s.responses) / (wall / 1e6),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: sum((s) => s.ok),
    non2xx: sum((s) => s.non2xx),
    errors: sum((s) => s.errors),
    timeouts: sum((s) => s.timeouts),
    serverCpu: sum((s) => s.serverCpuMicros) / wall,
    loadCpu: sum((s) => s.loadCpuMicros) / wall,
  };
}

/** A discarded warm-up run, then the measured run (one phase on its own, not interleaved). */
export async function measure<Name extends string>(phase: Phase<Name>, options: LoadOptions): Promise<Measured<Name>> {
  const only = await measureSlice(phase, options, options.warmupSeconds, options.durationSeconds);
  return mergeSlices(phase.name, [only]);
}

/**
 * Phases measured in turn, `rounds` times (A, B, A, B), each slice `durationSeconds / rounds`
 * long, so load from outside the benchmark (a shared machine) falls on every phase alike. The
 * first slice of a phase follows the full warm-up; later ones a warm-up of a quarter of it
 * (fresh connections, and the server's caches after the other phases).
 */
export async function measureInterleaved<Name extends string>(
  phases: readonly Phase<Name>[],
  options: LoadOptions & { rounds?: number },
  onSlice: (name: Name, round: number) => void = () => {},
): Promise<Record<Name, Measured<Name>>> {
  const rounds = options.rounds ?? ROUNDS;
  const slices = new Map<Name, Slice[]>(phases.map((p) => [p.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const phase of phases) {
      const warmup = round === 0 ? options.warmupSeconds : options.warmupSeconds / 4;
      slices.get(phase.name)?.push(await measureSlice(phase, options, warmup, options.durationSeconds / rounds));
      onSlice(phase.name, round);
    }
  }
  const results = {} as Record<Name, Measured<Name>>;
  for (const phase of phases) results[phase.name] = mergeSlices(phase.name, slices.get(phase.name) ?? []);
  return results;
}

export function printTable(rows: readonly Measured[]): void {
  const header = [
    "phase    ",
    "   req/s",
    "  p50 ms",
    "  p99 ms",
    "      2xx",
    "non2xx",
    "errors",
    "server CPU",
    "loadgen CPU",
  ];
  console.log(`\n${header.join("  ")}`);
  for (const r of rows) {
    const cells = [r.name.padEnd(9), r.rps.toFixed(0).padStart(8), r.p50.toFixed(2).padStart(8)];
    cells.push(r.p99.toFixed(2).padStart(8), String(r.ok).padStart(9), String(r.non2xx).padStart(6));
    cells.push(String(r.errors).padStart(6), `${Math.round(r.serverCpu * 100)}%`.padStart(10));
    cells.push(`${Math.round(r.loadCpu * 100)}%`.padStart(11));
    console.log(cells.join("  "));
  }
  console.log("");
}

/** Runs the phases interleaved (see `measureInterleaved`) against a server child that reports
 * its CPU time over IPC, and prints the table. */
export async function runPhases<Name extends string>(
  phases: readonly Phase<Name>[],
  options: LoadOptions & { rounds?: number },
): Promise<Record<Name, Measured<Name>>> {
  const rounds = options.rounds ?? ROUNDS;
  const results = await measureInterleaved(phases, options, (name, round) => {
    console.log(`measured ${name} (${round + 1}/${rounds})`);
  });
  printTable(phases.map((p) => results[p.name]));
  return results;
}

/** A benchmark of error responses would be meaningless: every phase must be all-2xx. */
export function failOnErrors(results: Record<string, Measured>): void {
  const failed = Object.values(results).filter((r) => r.ok === 0 || r.non2xx + r.errors + r.timeouts > 0);
  for (const r of failed) {
    printFail(`${r.name}: ${r.ok} 2xx, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  }
}
