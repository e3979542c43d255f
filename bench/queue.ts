// queue benchmark: 8 producers send jobs and 8 consumers receive and ack them, over HTTP on the
// real local engine (in a child process, bench/kv-server.ts), against the same loop on BullMQ
// with the machine's Redis, in the same run. Throughput is acked jobs per second; latency is
// end to end, from the start of the send to the end of the ack.
import { Agent, request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue, Worker } from "bullmq";
import type { ChildMessage, ParentMessage } from "./kv-server.js";
import { childCpuMicros, forkTs } from "./lib/child.js";
import { benchSeconds, cpuProfileDir } from "./lib/knobs.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const PRODUCERS = 8;
const CONSUMERS = 8;
/** Jobs a consumer leases per receive (the API's batch size; each job is still acked on its own). */
const RECEIVE_MAX = 10;
// biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
const redisUrl = new URL(process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379");

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

/** Producers send until the deadline; consumers receive (long poll) and ack until the deadline. */
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

async function prim(
  port: number,
  seconds: number,
  warmup: number,
  serverMicros: () => Promise<number>,
): Promise<Outcome> {
  const post = jsonClient(port);
  const group = await post("/v1/groups", { name: "bench" });
  if (group.status !== 201) throw new Error(`group create: ${group.status}`);
  const prim = await post("/v1/primitives", { name: "jobs", type: "queue", group: "bench" });
  const base = `/v1/primitives/${prim.body.id}/queues/work`;
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const measureFrom = start + warmup * 1000;
  const end = measureFrom + seconds * 1000;
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
  const meter = cpuMeter(serverMicros);
  const measured = (async () => {
    await sleepUntil(measureFrom);
    await meter.mark();
    await sleepUntil(end);
    return meter.read();
  })();
  await Promise.all([...Array.from({ length: PRODUCERS }, producer), ...Array.from({ length: CONSUMERS }, consumer)]);
  return summarize(latencies, seconds, errors, await measured);
}

/** The same loop on BullMQ: 8 producers calling `add`, 8 workers (concurrency 1) completing jobs. */
async function bullmq(seconds: number, warmup: number): Promise<Outcome> {
  const connection = { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) };
  const name = `prim-bench-${process.pid}-${Date.now()}`;
  const queue = new Queue(name, { connection });
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const measureFrom = start + warmup * 1000;
  const end = measureFrom + seconds * 1000;
  const workers = Array.from(
    { length: CONSUMERS },
    () =>
      new Worker(
        name,
        async (job) => {
          const t = (job.data as { t: number }).t;
          // Completion is acknowledged when the processor returns; measure then.
          queueMicrotask(() => {
            const now = performance.now();
            if (t >= measureFrom && now <= end) latencies.push(now - t);
          });
        },
        { connection, concurrency: 1, removeOnComplete: { count: 0 } },
      ),
  );
  for (const worker of workers) worker.on("failed", () => errors++);
  const producer = async () => {
    while (performance.now() < end) {
      try {
        await queue.add("job", { t: performance.now() }, { removeOnComplete: true });
      } catch {
        errors++;
      }
    }
  };
  const redis = await queue.client;
  const meter = cpuMeter(() => redisCpuMicros(redis));
  const measured = (async () => {
    await sleepUntil(measureFrom);
    await meter.mark();
    await sleepUntil(end);
    return meter.read();
  })();
  await Promise.all(Array.from({ length: PRODUCERS }, producer));
  const cpu = await measured;
  await Promise.all(workers.map((w) => w.close()));
  await queue.obliterate({ force: true });
  await queue.close();
  return summarize(latencies, seconds, errors, cpu);
}

export async function run(): Promise<void> {
  const seconds = benchSeconds(10);
  const warmup = Math.min(2, seconds);
  const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "kv-server.ts"), {
    cpuProfileDir: cpuProfileDir(),
  });
  let primOut: Outcome;
  try {
    const ready = await child.next("ready");
    primOut = await prim(ready.enginePort, seconds, warmup, () => childCpuMicros(child));
  } finally {
    await child.stop();
  }
  const bullOut = await bullmq(seconds, warmup);
  const rows = [
    ["prim (HTTP)", primOut],
    ["bullmq (Redis)", bullOut],
  ] as const;
  console.log(
    `${"loop".padEnd(16)} ${"jobs/s".padStart(9)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"jobs".padStart(8)} ${"server µs/job".padStart(14)} ${"client µs/job".padStart(14)} errors`,
  );
  for (const [name, o] of rows) {
    console.log(
      `${name.padEnd(16)} ${o.jobsPerSec.toFixed(0).padStart(9)} ${o.p50.toFixed(2).padStart(8)} ${o.p99.toFixed(2).padStart(8)} ${String(o.jobs).padStart(8)} ${o.serverCpuPerJob.toFixed(0).padStart(14)} ${o.loadCpuPerJob.toFixed(0).padStart(14)} ${o.errors}`,
    );
  }
  console.log(`RESULT queue_jobs_per_sec ${primOut.jobsPerSec.toFixed(0)} jobs/s`);
  console.log(`RESULT queue_e2e_p50 ${primOut.p50.toFixed(2)} ms`);
  console.log(`RESULT queue_e2e_p99 ${primOut.p99.toFixed(2)} ms`);
  console.log(`RESULT queue_server_cpu_per_job ${primOut.serverCpuPerJob.toFixed(0)} us`);
  console.log(`RESULT queue_client_cpu_per_job ${primOut.loadCpuPerJob.toFixed(0)} us`);
  console.log(`RESULT bullmq_jobs_per_sec ${bullOut.jobsPerSec.toFixed(0)} jobs/s`);
  console.log(`RESULT bullmq_e2e_p50 ${bullOut.p50.toFixed(2)} ms`);
  console.log(`RESULT bullmq_e2e_p99 ${bullOut.p99.toFixed(2)} ms`);
  console.log(`RESULT bullmq_redis_cpu_per_job ${bullOut.serverCpuPerJob.toFixed(0)} us`);
  console.log(`RESULT bullmq_client_cpu_per_job ${bullOut.loadCpuPerJob.toFixed(0)} us`);
  const ratio = primOut.jobsPerSec / bullOut.jobsPerSec;
  console.log(`RATIO queue_vs_bullmq ${ratio.toFixed(2)} (target 1.00)`);
  if (primOut.errors > 0 || bullOut.errors > 0) {
    console.log(`FAIL errors: prim ${primOut.errors}, bullmq ${bullOut.errors}`);
    process.exitCode = 1;
  }
}
