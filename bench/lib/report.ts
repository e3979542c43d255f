// Report of bench/storage.ts: one row per phase (operations/s and MB/s), a table for people,
// RESULT and RATIO lines for machines, and FAIL lines for phases with failed operations.
import type { Measured } from "./load.js";
import type { Driven } from "./objects.js";
import { printFail, printRatio } from "./verdict.js";

/** Decimal megabytes: MB/s figures are bytes/s ÷ 10^6. */
const MB = 1e6;

export interface Row {
  name: string;
  opsPerSec: number;
  mbps: number;
  /** Latency percentiles (ms) of the successful operations. */
  p50: number;
  p99: number;
  ops: number;
  failures: number;
  detail: string | null;
  /** Fraction of one core used by the server / this process; NaN when there is no server. */
  serverCpu: number;
  loadCpu: number;
}

const pct = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;

export function fromDriven(name: string, d: Driven): Row {
  const { ops, bytes, seconds, failures, latencies, serverCpu, loadCpu } = d;
  const rates = { opsPerSec: ops / seconds, mbps: bytes / seconds / MB };
  const p50 = pct(latencies, 0.5);
  const p99 = pct(latencies, 0.99);
  return { name, ...rates, p50, p99, ops, failures, detail: d.firstError, serverCpu, loadCpu };
}

/** An autocannon phase whose requests or responses each carried `bodyBytes` of object data. */
export function fromMeasured(m: Measured, bodyBytes: number): Row {
  const failures = m.non2xx + m.errors + m.timeouts + (m.ok === 0 ? 1 : 0);
  const detail = `${m.ok} 2xx, ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts`;
  const rates = { opsPerSec: m.rps, mbps: (m.rps * bodyBytes) / MB };
  return { name: m.name, ...rates, p50: m.p50, p99: m.p99, ops: m.ok, failures, detail, ...cpu(m) };
}

const cpu = (m: Measured) => ({ serverCpu: m.serverCpu, loadCpu: m.loadCpu });
const opsText = (r: Row) => (r.opsPerSec >= 100 ? r.opsPerSec.toFixed(0) : r.opsPerSec.toFixed(2));
const pctText = (x: number) => (Number.isNaN(x) ? "-" : `${Math.round(x * 100)}%`);

export function printTable(rows: readonly Row[]): void {
  const head = ["phase".padEnd(24), "   ops/s", "    MB/s", "  p50 ms", "  p99 ms", "    ops", "fail"];
  console.log(`\n${[...head, "server CPU", "loadgen CPU"].join("  ")}`);
  for (const r of rows) {
    const cells = [r.name.padEnd(24), opsText(r).padStart(8), r.mbps.toFixed(1).padStart(8)];
    cells.push(r.p50.toFixed(2).padStart(8), r.p99.toFixed(2).padStart(8), String(r.ops).padStart(7));
    cells.push(String(r.failures).padStart(4), pctText(r.serverCpu).padStart(10), pctText(r.loadCpu).padStart(11));
    console.log(cells.join("  "));
  }
  console.log("");
}

/** A RATIO line: `engine` MB/s over `baseline` MB/s; a null target is informational. */
export interface Ratio {
  label: string;
  engine: string;
  baseline: string;
  target: number | null;
}

/** Prints RESULT, RATIO and FAIL lines; a failed phase or a missed target fails the run. */
export function printResults(rows: readonly Row[], ratios: readonly Ratio[]): void {
  for (const r of rows) {
    console.log(`RESULT ${r.name}_ops ${opsText(r)} ops/s`);
    console.log(`RESULT ${r.name}_mbps ${r.mbps.toFixed(1)} MB/s`);
  }
  const byName = new Map(rows.map((r) => [r.name, r]));
  for (const { label, engine, baseline, target } of ratios) {
    const a = byName.get(engine);
    const b = byName.get(baseline);
    if (a === undefined || b === undefined) continue;
    printRatio(label, b.mbps > 0 ? a.mbps / b.mbps : 0, target);
  }
  // A benchmark of failed requests would be meaningless: every operation must succeed.
  const failed = rows.filter((r) => r.failures > 0);
  for (const r of failed) printFail(`${r.name}: ${r.failures} failed operations (${r.detail})`);
}
