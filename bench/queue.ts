// queue benchmark: 8 producers send jobs and 8 consumers receive and ack them, over HTTP on the
// real local engine (in a child process, bench/kv-server.ts), against the same loop on BullMQ
// with two private Redis servers (no persistence; AOF with fsync every second), interleaved in
// the same run. Throughput is completed jobs per second; latency is end to end, from the start
// of the send until the job's completion has been acknowledged by the store.
import { Agent, request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue, Worker } from "bullmq";
import type { ChildMessage, ParentMessage } from "./kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";
import { ROUNDS } from "./lib/load.js";
import { type RedisServer, startRedis } from "./lib/redis-server.js";
import { printFail, printRatio } from "./lib/verdict.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const PRODUCERS = 8;
const CONSUMERS = 8;
/** Jobs a consumer leases per receive (the API's batch size; each job is still acked on its own). */
const RECEIVE_MAX = 10;
/** Prim's loop should keep up with BullMQ's, at either durability. */
const TARGET = 1.0;

interface Outcome {
  jobsPerSec: number;
  /** CPU (µs, all threads) per acknowledged job: the server (engine or Redis) and this process. */
  serverCpuPerJob: number;
  loadCpuPerJob: number;
  p50: number;
  p99: number;
  jobs: number;
  errors: number;
}

const sleepUntil = (t: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, t - performance.now())));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;

interface Cpu {
  server: number;
  load: number;
}

function summarize(latencies: number[], seconds: number, errors: number, cpu: Cpu): Outcome {
  latencies.sort((a, b) => a - b);
  return {
    jobsPerSec: latencies.length / seconds,
    serverCpuPerJob: cpu.server / Math.max(1, latencies.length),
    loadCpuPerJob: cpu.load / Math.max(1, latencies.length),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    jobs: latencies.length,
    errors,
  };
}

/** A keep-alive JSON client over node:http (one socket per concurrent caller). */
function jsonClient(port: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: PRODUCERS + CONSUMERS });
  return (path: string, body: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path,
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) }),
          );
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
}

/** CPU used by this process and the server between `mark()` and `read()`. */
function cpuMeter(serverMicros: () => Promise<number>) {
  let load0 = 0;
  let server0 = 0;
  return {
    async mark() {
      server0 = await serverMicros();
      const u = process.cpuUsage();
      load0 = u.user + u.system;
    },
    async read(): Promise<Cpu> {
      const u = process.cpuUsage();
      return { server: (await serverMicros()) - server0, load: u.user + u.system - load0 };
    },
  };
}

/** Redis's own CPU time (µs) from INFO. */
async function redisCpuMicros(client: { info(section: string): Promise<string> }): Promise<number> {
  const info = await client.info("cpu");
  const get = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (get("used_cpu_sys") + get("used_cpu_user")) * 1e6;
}

/** One measured slice of a loop: what `summarize` turns into an Outcome, summed over slices. */
interface Tally {
  latencies: number[];
  seconds: number;
  errors: number;
  cpu: Cpu;
}

function mergeTallies(tallies: readonly Tally[]): Outcome {
  const sum = (f: (t: Tally) => number) => tallies.reduce((n, t) => n + f(t), 0);
  const cpu = { server: sum((t) => t.cpu.server), load: sum((t) => t.cpu.load) };
  return summarize(
    tallies.flatMap((t) => t.latencies),
    sum((t) => t.seconds),
    sum((t) => t.errors),
    cpu,
  );
}

/** Marks CPU at `measureFrom` and reads it at `end`. */
function measureWindow(meter: ReturnType<typeof cpuMeter>, measureFrom: number, end: number): Promise<Cpu> {
  return (async () => {
    await sleepUntil(measureFrom);
    await meter.mark();
    await sleepUntil(end);
    return meter.read();
  })();
}

/** Creates group `bench` and queue primitive `jobs`; returns the primitive's path. */
async function primSetup(post: ReturnType<typeof jsonClient>): Promise<string> {
  const group = await post("/v1/groups", { name: "bench" });
  if (group.status !== 201) throw new Error(`group create: ${group.status}`);
  const created = await post("/v1/primitives", { name: "jobs", type: "queue", group: "bench" });
  if (created.status !== 201) throw new Error(`primitive create: ${created.status}`);
  return `/v1/primitives/${created.body.id}`;
}

/**
 * One slice of the Prim loop on its own queue (`work-<slice>`, so no backlog carries over).
 * A job counts once the answer to its ack has arrived: the engine has committed it as done.
 */
async function primSlice(
  post: ReturnType<typeof jsonClient>,
  primitive: string,
  slice: Slice,
  serverMicros: () => Promise<number>,
): Promise<Tally> {
  const base = `${primitive}/queues/work-${slice.index}`;
  const latencies: number[] = [];
  let errors = 0;
  const measureFrom = performance.now() + slice.warmup * 1000;
  const end = measureFrom + slice.seconds * 1000;
  const producer = async () => {
    while (performance.now() < end) {
      const res = await post(`${base}/messages`, { body: { t: performance.now() } });
      if (res.status !== 201) errors++;
    }
  };
  const consumer = async () => {
    while (performance.now() < end) {
      const got = await post(`${base}/receive`, { wait: "1s", lease: "30s", max: RECEIVE_MAX });
      if (got.status !== 200) {
        errors++;
        continue;
      }
      for (const job of got.body.data as { id: string; lease_token: string; body: { t: number } }[]) {
        const acked = await post(`${base}/messages/${job.id}/ack`, { lease_token: job.lease_token });
        const now = performance.now();
        if (acked.status !== 200) errors++;
        else if (job.body.t >= measureFrom && now <= end) latencies.push(now - job.body.t);
      }
    }
  };
  const measured = measureWindow(cpuMeter(serverMicros), measureFrom, end);
  await Promise.all([...Array.from({ length: PRODUCERS }, producer), ...Array.from({ length: CONSUMERS }, consumer)]);
  return { latencies, seconds: slice.seconds, errors, cpu: await measured };
}

/**
 * One slice of the same loop on BullMQ: 8 producers calling `add`, 8 workers (concurrency 1)
 * with an empty processor, on a fresh queue. A job counts at the worker's `completed` event,
 * which BullMQ emits once `moveToCompleted` has answered: its completion has reached Redis.
 * Jobs are added with `removeOnComplete: true`, so that same call deletes them.
 */
async function bullmqSlice(redis: RedisServer, slice: Slice): Promise<Tally> {
  const connection = { host: "127.0.0.1", port: redis.port };
  const name = `prim-bench-${slice.index}`;
  const queue = new Queue(name, { connection });
  const latencies: number[] = [];
  let errors = 0;
  const workers = Array.from(
    { length: CONSUMERS },
    () => new Worker(name, async () => {}, { connection, concurrency: 1, autorun: false }),
  );
  await Promise.all([queue.waitUntilReady(), ...workers.map((w) => w.waitUntilReady())]);
  const measureFrom = performance.now() + slice.warmup * 1000;
  const end = measureFrom + slice.seconds * 1000;
  for (const worker of workers) {
    worker.on("failed", () => errors++);
    worker.on("completed", (job) => {
      const now = performance.now();
      const t = (job.data as { t: number }).t;
      if (t >= measureFrom && now <= end) latencies.push(now - t);
    });
    void worker.run();
  }
  const producer = async () => {
    while (performance.now() < end) {
      try {
        await queue.add("job", { t: performance.now() }, { removeOnComplete: true });
      } catch {
        errors++;
      }
    }
  };
  const client = await queue.client;
  const measured = measureWindow(
    cpuMeter(() => redisCpuMicros(client)),
    measureFrom,
    end,
  );
  await Promise.all(Array.from({ length: PRODUCERS }, producer));
  const cpu = await measured;
  await Promise.all(workers.map((w) => w.close()));
  await queue.obliterate({ force: true });
  await queue.close();
  return { latencies, seconds: slice.seconds, errors, cpu };
}

/** Slice `index` of a loop: `warmup` seconds not measured, then `seconds` measured. */
interface Slice {
  index: number;
  warmup: number;
  seconds: number;
}

const LOOPS = [
  { key: "prim", label: "prim (HTTP)" },
  { key: "bullmq", label: "bullmq (no persistence)" },
  { key: "bullmq_aof", label: "bullmq (AOF everysec)" },
] as const;
type LoopKey = (typeof LOOPS)[number]["key"];

function printTableOf(outcomes: Record<LoopKey, Outcome>): void {
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

function printResultsOf(outcomes: Record<LoopKey, Outcome>): void {
  const names: Record<LoopKey, [string, string]> = {
    prim: ["queue", "server"],
    bullmq: ["bullmq", "redis"],
    bullmq_aof: ["bullmq_aof", "redis"],
  };
  for (const { key } of LOOPS) {
    const o = outcomes[key];
    const [prefix, server] = names[key];
    console.log(`RESULT ${prefix}_jobs_per_sec ${o.jobsPerSec.toFixed(0)} jobs/s`);
    console.log(`RESULT ${prefix}_e2e_p50 ${o.p50.toFixed(2)} ms`);
    console.log(`RESULT ${prefix}_e2e_p99 ${o.p99.toFixed(2)} ms`);
    console.log(`RESULT ${prefix}_${server}_cpu_per_job ${o.serverCpuPerJob.toFixed(0)} us`);
    console.log(`RESULT ${prefix}_client_cpu_per_job ${o.loadCpuPerJob.toFixed(0)} us`);
  }
  const prim = outcomes.prim.jobsPerSec;
  printRatio("queue_vs_bullmq", prim / outcomes.bullmq.jobsPerSec, TARGET);
  printRatio("queue_vs_bullmq_aof", prim / outcomes.bullmq_aof.jobsPerSec, TARGET);
  for (const { key, label } of LOOPS) {
    if (outcomes[key].errors > 0) printFail(`${label}: ${outcomes[key].errors} failed requests or jobs`);
  }
}

export async function run(): Promise<void> {
  const seconds = benchSeconds(10);
  const warmup = Math.min(2, seconds);
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  const redis: RedisServer[] = [];
  const tallies: Record<LoopKey, Tally[]> = { prim: [], bullmq: [], bullmq_aof: [] };
  try {
    redis.push(await startRedis(false), await startRedis(true));
    const [plain, aof] = redis as [RedisServer, RedisServer];
    const ready = await child.next("ready");
    const post = jsonClient(ready.enginePort);
    const primitive = await primSetup(post);
    const serverMicros = () => childCpuMicros(child);
    console.log(`queue bench: ${PRODUCERS} producers, ${CONSUMERS} consumers; ${seconds}s measured per loop`);
    console.log(`  in ${ROUNDS} interleaved slices (Prim, BullMQ, BullMQ with AOF, then again), warm-up before each`);
    for (let round = 0; round < ROUNDS; round++) {
      const slice = (k: number): Slice => ({
        index: round * LOOPS.length + k,
        warmup: round === 0 ? warmup : warmup / 4,
        seconds: seconds / ROUNDS,
      });
      tallies.prim.push(await primSlice(post, primitive, slice(0), serverMicros));
      tallies.bullmq.push(await bullmqSlice(plain, slice(1)));
      tallies.bullmq_aof.push(await bullmqSlice(aof, slice(2)));
      console.log(`round ${round + 1}/${ROUNDS} done`);
    }
  } finally {
    await child.stop();
    await Promise.all(redis.map((r) => r.stop()));
  }
  const outcomes = {
    prim: mergeTallies(tallies.prim),
    bullmq: mergeTallies(tallies.bullmq),
    bullmq_aof: mergeTallies(tallies.bullmq_aof),
  };
  printTableOf(outcomes);
  printResultsOf(outcomes);
}
