// What the queue benchmark's loops share: the JSON client, CPU accounting, slices and tallies,
// and the figures (Outcome) a loop reports. See bench/queue.ts.
import { Agent, request } from "node:http";

export const PRODUCERS = 8;
export const CONSUMERS = 8;

/** Slice `index` of a loop: `warmup` seconds not measured, then `seconds` measured. */
export interface Slice {
  index: number;
  warmup: number;
  seconds: number;
}

export interface Cpu {
  server: number;
  load: number;
}

/** One measured slice of a loop: what `summarize` turns into an Outcome, summed over slices. */
export interface Tally {
  latencies: number[];
  seconds: number;
  errors: number;
  cpu: Cpu;
  /** The first few failures, word for word, for the report. */
  notes?: string[];
}

export interface Outcome {
  jobsPerSec: number;
  /** CPU (µs, all threads) per acknowledged job: the server (engine or Redis) and this process. */
  serverCpuPerJob: number;
  loadCpuPerJob: number;
  p50: number;
  p99: number;
  jobs: number;
  errors: number;
  notes: string[];
}

/** A JSON request (POST unless `method` says otherwise) and its parsed answer. */
export type Post = (path: string, body: unknown, method?: string) => Promise<{ status: number; body: any }>;

export const sleepUntil = (t: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, t - performance.now())));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;

function summarize(latencies: number[], seconds: number, errors: number, cpu: Cpu, notes: string[]): Outcome {
  latencies.sort((a, b) => a - b);
  return {
    jobsPerSec: latencies.length / seconds,
    serverCpuPerJob: cpu.server / Math.max(1, latencies.length),
    loadCpuPerJob: cpu.load / Math.max(1, latencies.length),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    jobs: latencies.length,
    errors,
    notes,
  };
}

export function mergeTallies(tallies: readonly Tally[]): Outcome {
  const sum = (f: (t: Tally) => number) => tallies.reduce((n, t) => n + f(t), 0);
  const cpu = { server: sum((t) => t.cpu.server), load: sum((t) => t.cpu.load) };
  return summarize(
    tallies.flatMap((t) => t.latencies),
    sum((t) => t.seconds),
    sum((t) => t.errors),
    cpu,
    tallies.flatMap((t) => t.notes ?? []).slice(0, 5),
  );
}

/** Keeps the first few failure descriptions of a slice. */
export function noteTo(notes: string[]): (note: string) => void {
  return (note) => {
    if (notes.length < 5) notes.push(note.slice(0, 400));
  };
}

/** A keep-alive JSON client over node:http (one socket per concurrent caller, up to `sockets`). */
export function jsonClient(port: number, sockets = PRODUCERS + CONSUMERS): Post {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  return (path: string, body: unknown, method = "POST") =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path,
          method,
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
export function cpuMeter(serverMicros: () => Promise<number>) {
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
export async function redisCpuMicros(client: { info(section: string): Promise<string> }): Promise<number> {
  const info = await client.info("cpu");
  const get = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (get("used_cpu_sys") + get("used_cpu_user")) * 1e6;
}

/** Marks CPU at `measureFrom` and reads it at `end`. */
export function measureWindow(meter: ReturnType<typeof cpuMeter>, measureFrom: number, end: number): Promise<Cpu> {
  return (async () => {
    await sleepUntil(measureFrom);
    await meter.mark();
    await sleepUntil(end);
    return meter.read();
  })();
}

/** Creates queue primitive `name` in group `bench` (the group once, `group: true`); returns its path. */
export async function primPrimitive(post: Post, name: string, group: boolean): Promise<string> {
  if (group) {
    const created = await post("/v1/groups", { name: "bench" });
    if (created.status !== 201) throw new Error(`group create: ${created.status}`);
  }
  const created = await post("/v1/primitives", { name, type: "queue", group: "bench" });
  if (created.status !== 201) throw new Error(`primitive create: ${created.status}`);
  return `/v1/primitives/${created.body.id}`;
}

/**
 * Bounds the jobs a loop has sent and not yet seen completed: a producer takes room for its
 * batch before it sends, and waits while there is none. Without it, a loop whose producers are
 * cheaper than its consumers (batch sends are) builds a backlog that grows for the whole slice,
 * and the slice measures the backlog: jobs sent in the warm-up, ever-rising latency. At `end`
 * every waiter is let go (`take` answers false).
 */
export class InFlight {
  private outstanding = 0;
  private waiters: (() => void)[] = [];
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly cap: number,
    end: number,
  ) {
    this.timer = setTimeout(() => this.close(), Math.max(0, end - performance.now()));
  }

  /** Waits for room for `n` jobs and takes it; false once the slice is over. */
  async take(n: number): Promise<boolean> {
    while (!this.closed && this.outstanding + n > this.cap) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    if (this.closed) return false;
    this.outstanding += n;
    return true;
  }

  /** `n` jobs completed (or failed): their room is free again. */
  done(n: number): void {
    this.outstanding -= n;
    this.wake();
  }

  close(): void {
    clearTimeout(this.timer);
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
