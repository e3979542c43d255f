// kv benchmark: REST kv GET/PUT on the real local engine vs a bare Fastify route serving the
// same bytes. Servers run in a child process (bench/kv-server.ts); autocannon runs here.
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import type { ChildMessage, ParentMessage } from "./kv-server.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const KEYS = 1000;
const VALUE = "v".repeat(1024); // the 1 KiB JSON string value
const PUT_BODY = JSON.stringify({ value: VALUE });
const JSON_HEADERS = { "content-type": "application/json" };
const CONNECTIONS = 50;
const TARGETS = { kv_get_vs_bare: 0.6, kv_put_vs_bare: 0.4 } as const;

interface Phase {
  name: "bare_get" | "kv_get" | "bare_put" | "kv_put";
  url: string;
  requests: autocannon.Request[];
}

interface Measured {
  name: Phase["name"];
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  serverCpu: number; // fraction of one core used by the server child during the phase
  loadCpu: number; // fraction of one core used by this (autocannon) process
}

function seconds(env: string | undefined, fallback: number): number {
  const n = env === undefined ? Number.NaN : Number(env);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

function startChild(): { child: ChildProcess; next: <T extends ChildMessage["type"]>(type: T) => Promise<Extract<ChildMessage, { type: T }>> } {
  const execArgv = ["--import", "tsx"];
  if (process.env.BENCH_CPU_PROF) {
    const dir = join(benchDir, "results");
    mkdirSync(dir, { recursive: true });
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
  }
  const child = fork(join(benchDir, "kv-server.ts"), [], { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const next = <T extends ChildMessage["type"]>(type: T) =>
    new Promise<Extract<ChildMessage, { type: T }>>((resolve, reject) => {
      const onMessage = (raw: unknown) => {
        const message = raw as ChildMessage;
        if (message.type !== type) return;
        cleanup();
        resolve(message as Extract<ChildMessage, { type: T }>);
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`kv-server exited (code ${code}) while waiting for '${type}'`));
      };
      const cleanup = () => {
        child.off("message", onMessage);
        child.off("exit", onExit);
      };
      child.on("message", onMessage);
      child.on("exit", onExit);
    });
  return { child, next };
}

async function call(method: string, url: string, body?: unknown): Promise<string> {
  const init: RequestInit = { method, headers: body === undefined ? {} : JSON_HEADERS };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
  return text;
}

/** Creates group, primitive and the 1,000 keys; returns the primitive's id. */
async function seed(base: string): Promise<string> {
  await call("POST", `${base}/v1/groups`, { name: "bench" });
  const { id } = JSON.parse(await call("POST", `${base}/v1/primitives`, { name: "bench", type: "kv", group: "bench" })) as { id: string };
  for (let i = 0; i < KEYS; i += 50) {
    const batch = Array.from({ length: Math.min(50, KEYS - i) }, (_, j) => `${base}/v1/primitives/${id}/keys/k${i + j}`);
    await Promise.all(batch.map((url) => call("PUT", url, PUT_BODY)));
  }
  return id;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** One autocannon run; latencies are collected from 'response' events (µs precision, 2xx only). */
function fire(phase: Phase, duration: number): Promise<{ result: autocannon.Result; latencies: Float64Array }> {
  return new Promise((resolve, reject) => {
    const samples: number[] = [];
    const opts: autocannon.Options = { url: phase.url, connections: CONNECTIONS, pipelining: 1, duration, requests: phase.requests };
    const instance = autocannon(opts, (err: unknown, result: autocannon.Result) => {
      if (err) reject(err);
      else resolve({ result, latencies: Float64Array.from(samples).sort() });
    });
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) samples.push(ms);
    });
  });
}

async function measure(phase: Phase, warmup: number, duration: number, serverCpu: () => Promise<number>): Promise<Measured> {
  await fire(phase, warmup); // discarded
  const cpu0 = await serverCpu();
  const load0 = process.cpuUsage();
  const t0 = performance.now();
  const { result, latencies } = await fire(phase, duration);
  const wall = (performance.now() - t0) * 1000; // µs
  const load = process.cpuUsage(load0);
  const cpu1 = await serverCpu();
  return {
    name: phase.name,
    rps: result.requests.average,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpu: (cpu1 - cpu0) / wall,
    loadCpu: (load.user + load.system) / wall,
  };
}

function printTable(rows: Measured[]): void {
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  console.log("\nphase      req/s     p50 ms   p99 ms   2xx        non2xx  errors  server CPU  autocannon CPU");
  for (const r of rows) {
    const cols = [r.name.padEnd(8), r.rps.toFixed(0).padStart(8), r.p50.toFixed(2).padStart(8), r.p99.toFixed(2).padStart(8)];
    cols.push(String(r.ok).padEnd(9), String(r.non2xx).padStart(6), String(r.errors).padStart(6), pct(r.serverCpu).padStart(10), pct(r.loadCpu).padStart(14));
    console.log(cols.join("   "));
  }
  console.log("");
}

export async function run(): Promise<void> {
  const duration = seconds(process.env.BENCH_DURATION, 10);
  const warmup = Math.min(2, duration);
  const { child, next } = startChild();
  try {
    const ready = await next("ready");
    const base = `http://127.0.0.1:${ready.enginePort}`;
    const bare = `http://127.0.0.1:${ready.barePort}`;
    const send = (message: ParentMessage) => child.send(message);
    const serverCpu = async () => {
      send({ type: "cpu" });
      const m = await next("cpu");
      return m.user + m.system;
    };

    console.log(`kv bench: ${KEYS} keys × 1 KiB, ${CONNECTIONS} connections, ${warmup}s warm-up + ${duration}s per phase`);
    const id = await seed(base);
    const keyUrl = (i: number) => `/v1/primitives/${id}/keys/k${i}`;
    // Bare routes answer with exactly the bytes the kv routes answer with.
    const getBody = await call("GET", `${base}${keyUrl(0)}`);
    const putBody = await call("PUT", `${base}${keyUrl(0)}`, PUT_BODY);
    send({ type: "bodies", get: getBody, put: putBody });
    await next("bodies-set");
    console.log(`response bodies: GET ${Buffer.byteLength(getBody)} B, PUT ${Buffer.byteLength(putBody)} B`);

    // Round-robin over the keys with prebuilt (static) requests, so autocannon does the same
    // per-request work for kv and bare phases (setupRequest would rebuild a buffer per request).
    const indexes = Array.from({ length: KEYS }, (_, i) => i);
    const put = { method: "PUT" as const, headers: JSON_HEADERS, body: PUT_BODY };
    const phases: Phase[] = [
      { name: "bare_get", url: bare, requests: [{ method: "GET", path: "/bare" }] },
      { name: "kv_get", url: base, requests: indexes.map((i) => ({ method: "GET", path: keyUrl(i) })) },
      { name: "bare_put", url: bare, requests: [{ ...put, path: "/bare" }] },
      { name: "kv_put", url: base, requests: indexes.map((i) => ({ ...put, path: keyUrl(i) })) },
    ];
    const results = new Map<Phase["name"], Measured>();
    for (const phase of phases) {
      process.stdout.write(`running ${phase.name}… `);
      const m = await measure(phase, warmup, duration, serverCpu);
      results.set(phase.name, m);
      console.log(`${m.rps.toFixed(0)} req/s`);
    }
    const rows = phases.map((p) => results.get(p.name) as Measured);
    printTable(rows);

    for (const name of ["kv_get", "kv_put", "bare_get", "bare_put"] as const) {
      const m = results.get(name) as Measured;
      console.log(`RESULT ${name}_rps ${m.rps.toFixed(0)} req/s`);
      console.log(`RESULT ${name}_p50 ${m.p50.toFixed(2)} ms`);
      console.log(`RESULT ${name}_p99 ${m.p99.toFixed(2)} ms`);
    }
    const ratio = (kv: Measured, ceiling: Measured) => (ceiling.rps > 0 ? kv.rps / ceiling.rps : 0);
    const kvGet = results.get("kv_get") as Measured;
    const kvPut = results.get("kv_put") as Measured;
    const getRatio = ratio(kvGet, results.get("bare_get") as Measured);
    const putRatio = ratio(kvPut, results.get("bare_put") as Measured);
    console.log(`RATIO kv_get_vs_bare ${getRatio.toFixed(2)} (target ${TARGETS.kv_get_vs_bare.toFixed(2)})`);
    console.log(`RATIO kv_put_vs_bare ${putRatio.toFixed(2)} (target ${TARGETS.kv_put_vs_bare.toFixed(2)})`);

    const failed = rows.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.ok === 0);
    if (failed.length > 0) {
      for (const r of failed) {
        console.error(`FAIL ${r.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.ok} 2xx`);
      }
      process.exitCode = 1;
    }
  } finally {
    await stopChild(child);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.connected) child.send({ type: "stop" } satisfies ParentMessage);
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}
