// queue benchmark: 8 producers send jobs and 8 consumers receive and ack them, over HTTP on the
// real local engine (in a child process, bench/kv-server.ts), against the same loop on BullMQ
// with two private Redis servers (no persistence; AOF with fsync every second), interleaved in
// the same run — once a message per call (send, ack) and once in batches of 10 (messages/batch,
// ack/batch; BullMQ's addBulk). Throughput is completed jobs per second; latency is end to end,
// from just before the send until the job's completion has been acknowledged by the store.
// Then a backlog: one queue filled with BENCH_BACKLOG jobs and drained by the batch consumers,
// against the same consumers draining a shallow queue. Loops: lib/queue-loops.ts; backlog:
// lib/queue-backlog.ts. The single loop runs twice on Prim: on a `fast` primitive and on one
// set `durable` (PATCH), whose every answer waits for the fsync covering its write.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildMessage, ParentMessage } from "./kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchBacklog, benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { ROUNDS } from "./lib/load.js";
import {
  addRuns,
  drainQueue,
  FILL_BATCH,
  FILLERS,
  fillQueue,
  queueCounts,
  type Run,
  SHALLOW_JOBS,
  shallowDrains,
} from "./lib/queue-backlog.js";
import {
  CONSUMERS,
  jsonClient,
  mergeTallies,
  type Outcome,
  PRODUCERS,
  primPrimitive,
  type Slice,
  type Tally,
} from "./lib/queue-common.js";
import { BATCH, bullmqSlice, primBatchSlice, primSlice } from "./lib/queue-loops.js";
import { type RedisServer, startRedis } from "./lib/redis-server.js";
import { addSyncs, childSyncs, printSyncs, type Syncs, syncsBetween } from "./lib/syncs.js";
import { printFail, printRatio } from "./lib/verdict.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
/** Single-message loop: Prim's jobs/s over BullMQ's `add` loop's. */
const TARGET_SINGLE = 0.45;
/** Batch loop: Prim's jobs/s over BullMQ's `addBulk` loop's. */
const TARGET_BATCH = 1.5;
/** Batch loop: BullMQ's end-to-end p99 over Prim's (higher is better: Prim's tail no longer). */
const TARGET_BATCH_P99 = 1.0;
/** Draining a deep backlog keeps at least this share of the shallow drain's jobs/s. */
const TARGET_BACKLOG = 0.8;
/** Single loop on a durable primitive: at least this share of the fast one's jobs/s. */
const TARGET_DURABLE = 0.8;

const LOOPS = [
  { key: "prim", label: "prim (HTTP)", prefix: "queue", server: "server" },
  { key: "prim_durable", label: "prim durable (HTTP)", prefix: "queue_durable", server: "server" },
  { key: "bullmq", label: "bullmq (no persistence)", prefix: "bullmq", server: "redis" },
  { key: "bullmq_aof", label: "bullmq (AOF everysec)", prefix: "bullmq_aof", server: "redis" },
  { key: "prim_batch", label: "prim batch 10 (HTTP)", prefix: "queue_batch", server: "server" },
  { key: "bullmq_bulk", label: "bullmq addBulk 10", prefix: "bullmq_bulk", server: "redis" },
  { key: "bullmq_bulk_aof", label: "bullmq addBulk 10 (AOF)", prefix: "bullmq_bulk_aof", server: "redis" },
] as const;
type LoopKey = (typeof LOOPS)[number]["key"];

function printLoopTable(outcomes: Record<LoopKey, Outcome>): void {
  const head = ["loop".padEnd(24), "jobs/s".padStart(9), "p50 ms".padStart(8), "p99 ms".padStart(8)];
  head.push("jobs".padStart(8), "server µs/job".padStart(14), "client µs/job".padStart(14), "errors");
  console.log(`\n${head.join(" ")}`);
  for (const { key, label } of LOOPS) {
    const o = outcomes[key];
    const cells = [label.padEnd(24), o.jobsPerSec.toFixed(0).padStart(9), o.p50.toFixed(2).padStart(8)];
    cells.push(o.p99.toFixed(2).padStart(8), String(o.jobs).padStart(8), o.serverCpuPerJob.toFixed(0).padStart(14));
    cells.push(o.loadCpuPerJob.toFixed(0).padStart(14), String(o.errors));
    console.log(cells.join(" "));
  }
  console.log("");
}

function printLoopResults(outcomes: Record<LoopKey, Outcome>): void {
  for (const { key, prefix, server } of LOOPS) {
    const o = outcomes[key];
    console.log(`RESULT ${prefix}_jobs_per_sec ${o.jobsPerSec.toFixed(0)} jobs/s`);
    console.log(`RESULT ${prefix}_e2e_p50 ${o.p50.toFixed(2)} ms`);
    console.log(`RESULT ${prefix}_e2e_p99 ${o.p99.toFixed(2)} ms`);
    console.log(`RESULT ${prefix}_${server}_cpu_per_job ${o.serverCpuPerJob.toFixed(0)} us`);
    console.log(`RESULT ${prefix}_client_cpu_per_job ${o.loadCpuPerJob.toFixed(0)} us`);
  }
}

function printLoopRatios(outcomes: Record<LoopKey, Outcome>): void {
  const { prim, prim_durable, bullmq, bullmq_aof, prim_batch, bullmq_bulk, bullmq_bulk_aof } = outcomes;
  printRatio("queue_vs_bullmq", prim.jobsPerSec / bullmq.jobsPerSec, TARGET_SINGLE);
  printRatio("queue_durable_vs_fast", prim_durable.jobsPerSec / prim.jobsPerSec, TARGET_DURABLE);
  printRatio("queue_durable_vs_bullmq_aof", prim_durable.jobsPerSec / bullmq_aof.jobsPerSec, null);
  printRatio("queue_vs_bullmq_aof", prim.jobsPerSec / bullmq_aof.jobsPerSec, TARGET_SINGLE);
  printRatio("queue_batch_vs_bullmq_bulk", prim_batch.jobsPerSec / bullmq_bulk.jobsPerSec, TARGET_BATCH);
  printRatio("queue_batch_vs_bullmq_bulk_aof", prim_batch.jobsPerSec / bullmq_bulk_aof.jobsPerSec, TARGET_BATCH);
  printRatio("queue_batch_p99_vs_bullmq_bulk", bullmq_bulk.p99 / prim_batch.p99, TARGET_BATCH_P99);
  printRatio("queue_batch_p99_vs_bullmq_bulk_aof", bullmq_bulk_aof.p99 / prim_batch.p99, TARGET_BATCH_P99);
  printRatio("queue_batch_vs_single", prim_batch.jobsPerSec / prim.jobsPerSec, null);
}

/** A backlog run's line for people: rate, CPU per job, what it covered. */
function describeRun(label: string, run: Run, what: string): void {
  const perJob = (us: number) => (us / Math.max(1, run.jobs)).toFixed(0);
  const rate = (run.jobs / run.seconds).toFixed(0);
  console.log(
    `  ${label.padEnd(22)} ${rate.padStart(7)} jobs/s  ${String(run.jobs).padStart(8)} jobs in ${run.seconds.toFixed(1)} s` +
      `  engine ${perJob(run.cpu.server)} µs/job, client ${perJob(run.cpu.load)} µs/job  (${what})`,
  );
}

interface Backlog {
  fill: Run;
  drains: Run[];
  shallow: Run[];
}

/**
 * Fills queue `backlog` of its own primitive with `total` jobs, then drains it in ROUNDS parts,
 * each after a slice of shallow drains on another primitive (A, B, A, B); the last part drains
 * to empty. Checks the queue's counts after the fill and after the drain.
 */
async function backlogPhases(
  post: ReturnType<typeof jsonClient>,
  port: number,
  total: number,
  seconds: number,
  serverMicros: () => Promise<number>,
  phase: (name: string) => void,
): Promise<Backlog> {
  const deep = await primPrimitive(post, "backlog", false);
  const shallowPrimitive = await primPrimitive(post, "shallow", false);
  const base = `${deep}/queues/backlog`;
  const fill = await fillQueue(post, base, total, serverMicros);
  phase(`backlog fill (${total} jobs)`);
  const filled = await queueCounts(port, deep, "backlog");
  if (filled?.ready !== fill.jobs) {
    printFail(`backlog: ${fill.jobs} jobs sent, the queue's counts after the fill: ${JSON.stringify(filled)}`);
  }
  let n = 0;
  const next = () => n++;
  // Warm-up: the shallow primitive's store opens, one small fill and drain (not reported).
  await shallowDrains(post, shallowPrimitive, 0.01, next, serverMicros, SHALLOW_JOBS / 10);
  const drains: Run[] = [];
  const shallow: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    shallow.push(await shallowDrains(post, shallowPrimitive, seconds / ROUNDS, next, serverMicros));
    const left = fill.jobs - drains.reduce((s, r) => s + r.jobs, 0);
    const quota = round === ROUNDS - 1 ? left : Math.min(left, Math.ceil(fill.jobs / ROUNDS));
    drains.push(await drainQueue(post, base, quota, serverMicros));
    phase(`backlog drain part ${round + 1}/${ROUNDS} and shallow drains`);
  }
  const after = await queueCounts(port, deep, "backlog");
  if (after?.done !== fill.jobs || after.ready !== 0 || after.leased !== 0) {
    printFail(`backlog: ${fill.jobs} jobs sent, the queue's counts after the drain: ${JSON.stringify(after)}`);
  }
  return { fill, drains, shallow };
}

function printBacklogTable(backlog: Backlog): void {
  console.log(
    `backlog: filled with batches of ${FILL_BATCH} from ${FILLERS} callers; drains by ${CONSUMERS} consumers`,
  );
  describeRun("fill", backlog.fill, `${backlog.fill.jobs} jobs`);
  let depth = backlog.fill.jobs;
  backlog.drains.forEach((run, i) => {
    describeRun(`drain part ${i + 1}`, run, `queue depth ${depth} → ${depth - run.jobs}`);
    depth -= run.jobs;
  });
  backlog.shallow.forEach((run, i) => {
    describeRun(`shallow drains ${i + 1}`, run, `queues of ${SHALLOW_JOBS} jobs, refilled untimed`);
  });
  console.log("");
}

/** Prints the backlog's RESULT lines and its failures; returns the printer of its RATIO lines. */
function printBacklogResults(backlog: Backlog, batchLoop: Outcome): () => void {
  const drain = addRuns(backlog.drains);
  const shallow = addRuns(backlog.shallow);
  const rate = (r: Run) => r.jobs / r.seconds;
  const perJob = (us: number, r: Run) => (us / Math.max(1, r.jobs)).toFixed(0);
  console.log(`RESULT queue_backlog_fill_jobs_per_sec ${rate(backlog.fill).toFixed(0)} jobs/s`);
  console.log(`RESULT queue_backlog_fill_server_cpu_per_job ${perJob(backlog.fill.cpu.server, backlog.fill)} us`);
  console.log(`RESULT queue_backlog_drain_jobs_per_sec ${rate(drain).toFixed(0)} jobs/s`);
  console.log(`RESULT queue_backlog_drain_server_cpu_per_job ${perJob(drain.cpu.server, drain)} us`);
  console.log(`RESULT queue_shallow_drain_jobs_per_sec ${rate(shallow).toFixed(0)} jobs/s`);
  console.log(`RESULT queue_shallow_drain_server_cpu_per_job ${perJob(shallow.cpu.server, shallow)} us`);
  for (const [name, run] of [["backlog fill", backlog.fill] as const, ["backlog drain", drain] as const]) {
    if (run.errors > 0) printFail(`${name}: ${run.errors} failed requests or entries; first: ${run.notes.join(" | ")}`);
  }
  if (shallow.errors > 0) printFail(`shallow drains: ${shallow.errors} failures; first: ${shallow.notes.join(" | ")}`);
  return () => {
    printRatio("queue_backlog_drain_vs_shallow_drain", rate(drain) / rate(shallow), TARGET_BACKLOG);
    printRatio("queue_backlog_drain_vs_batch_loop", rate(drain) / batchLoop.jobsPerSec, null);
  };
}

export async function run(): Promise<void> {
  const seconds = benchSeconds(10);
  const warmup = Math.min(2, seconds);
  const backlogJobs = benchBacklog(1_000_000);
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  const redis: RedisServer[] = [];
  const tallies = Object.fromEntries(LOOPS.map(({ key }) => [key, [] as Tally[]])) as Record<LoopKey, Tally[]>;
  const started = performance.now();
  let lap = started;
  const phase = (name: string) => {
    const now = performance.now();
    console.log(`phase ${name}: ${((now - lap) / 1000).toFixed(1)} s`);
    lap = now;
  };
  let backlog: Backlog;
  let durableSyncs: Syncs = { fsyncs: 0, writes: 0 };
  let durableSeconds = 0;
  try {
    redis.push(await startRedis(false), await startRedis(true));
    const [plain, aof] = redis as [RedisServer, RedisServer];
    const ready = await child.next("ready");
    const post = jsonClient(ready.enginePort);
    // The single loop keeps its own primitive (SQLite file), as before the batch loop existed.
    const primitive = await primPrimitive(post, "jobs", true);
    const batchPrimitive = await primPrimitive(post, "batch", false);
    const durablePrimitive = await primPrimitive(post, "durable", false);
    const patched = await post(durablePrimitive, { durability: "durable" }, "PATCH");
    if (patched.body?.durability !== "durable") throw new Error(`PATCH durability: ${patched.status}`);
    const serverMicros = () => childCpuMicros(child);
    console.log(`queue bench: ${PRODUCERS} producers, ${CONSUMERS} consumers; ${seconds}s measured per loop`);
    console.log(`  single (send, receive 10, ack each) and batch (send ${BATCH}, receive ${BATCH}, ack ${BATCH});`);
    console.log(`  in ${ROUNDS} interleaved slices (${LOOPS.map((l) => l.key).join(", ")}, then again)`);
    console.log(`  then a backlog of ${backlogJobs} jobs drained in ${ROUNDS} parts between shallow drains`);
    phase("setup");
    for (let round = 0; round < ROUNDS; round++) {
      const slice = (k: number): Slice => ({
        index: round * LOOPS.length + k,
        warmup: round === 0 ? warmup : warmup / 4,
        seconds: seconds / ROUNDS,
      });
      tallies.prim.push(await primSlice(post, primitive, slice(0), serverMicros));
      const before = await childSyncs(child);
      const durableSlice = slice(6);
      tallies.prim_durable.push(await primSlice(post, durablePrimitive, durableSlice, serverMicros));
      durableSyncs = addSyncs(durableSyncs, syncsBetween(before, await childSyncs(child)));
      durableSeconds += durableSlice.warmup + durableSlice.seconds;
      tallies.bullmq.push(await bullmqSlice(plain, slice(1), false));
      tallies.bullmq_aof.push(await bullmqSlice(aof, slice(2), false));
      tallies.prim_batch.push(await primBatchSlice(post, batchPrimitive, slice(3), serverMicros));
      tallies.bullmq_bulk.push(await bullmqSlice(plain, slice(4), true));
      tallies.bullmq_bulk_aof.push(await bullmqSlice(aof, slice(5), true));
      phase(`loops round ${round + 1}/${ROUNDS}`);
    }
    backlog = await backlogPhases(post, ready.enginePort, backlogJobs, seconds, serverMicros, phase);
  } finally {
    await child.stop();
    await Promise.all(redis.map((r) => r.stop()));
  }
  console.log(`total: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const outcomes = Object.fromEntries(LOOPS.map(({ key }) => [key, mergeTallies(tallies[key])])) as Record<
    LoopKey,
    Outcome
  >;
  printLoopTable(outcomes);
  printBacklogTable(backlog);
  printLoopResults(outcomes);
  // Writes: every send, receive (a lease) and ack of the durable loop, warm-ups included.
  printSyncs("queue_durable", durableSyncs, durableSeconds);
  const backlogRatios = printBacklogResults(backlog, outcomes.prim_batch);
  printLoopRatios(outcomes);
  backlogRatios();
  for (const { key, label } of LOOPS) {
    const o = outcomes[key];
    if (o.errors > 0)
      printFail(
        `${label}: ${o.errors} failed requests or jobs${o.notes.length ? `; first: ${o.notes.join(" | ")}` : ""}`,
      );
  }
}
