// Load generation with autocannon (in-process), plus the figures a phase reports.
import autocannon from "autocannon";

export interface Phase<Name extends string = string> {
  name: Name;
  url: string;
  requests: autocannon.Request[];
}

export interface Measured<Name extends string = string> {
  name: Name;
  /** Mean requests/s over the phase (autocannon's per-second samples). */
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

/** A discarded warm-up run, then the measured run. */
export async function measure<Name extends string>(phase: Phase<Name>, options: LoadOptions): Promise<Measured<Name>> {
  await fire(phase, options.connections, options.warmupSeconds);
  let server0: Promise<number> = Promise.resolve(Number.NaN);
  const run = await fire(phase, options.connections, options.durationSeconds, () => {
    server0 = options.serverCpuMicros();
  });
  const server1 = await options.serverCpuMicros();
  const { result, latencies } = run;
  return {
    name: phase.name,
    rps: result.requests.average,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpu: (server1 - (await server0)) / run.wallMicros,
    loadCpu: run.loadCpuMicros / run.wallMicros,
  };
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

/** Runs the phases in order against a server child that reports its CPU time over IPC. */
export async function runPhases<Name extends string>(
  phases: readonly Phase<Name>[],
  options: Omit<LoadOptions, "serverCpuMicros"> & { serverCpuMicros: () => Promise<number> },
): Promise<Record<Name, Measured<Name>>> {
  const results = {} as Record<Name, Measured<Name>>;
  for (const phase of phases) {
    process.stdout.write(`running ${phase.name}… `);
    results[phase.name] = await measure(phase, options);
    console.log(`${results[phase.name].rps.toFixed(0)} req/s`);
  }
  printTable(phases.map((p) => results[p.name]));
  return results;
}

/** A benchmark of error responses would be meaningless: every phase must be all-2xx. */
export function failOnErrors(results: Record<string, Measured>): void {
  const failed = Object.values(results).filter((r) => r.ok === 0 || r.non2xx + r.errors + r.timeouts > 0);
  for (const r of failed) {
    console.error(`FAIL ${r.name}: ${r.ok} 2xx, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  }
  if (failed.length > 0) process.exitCode = 1;
}
