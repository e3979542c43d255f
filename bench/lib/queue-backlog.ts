// The queue benchmark's backlog phases (bench/queue.ts): fill a queue with batches of 100 over
// HTTP, drain it with the batch loop's consumers (receive 10, ack batch 10), and the reference
// they are compared with: the same consumers draining a shallow queue, refilled between drains
// with the clock stopped.
import { CONSUMERS, type Cpu, cpuMeter, noteTo, type Post } from "./queue-common.js";
import { ackBatch, receiveBatch, sendBatch } from "./queue-loops.js";

/** Jobs per `messages/batch` call while filling (the API's maximum). */
export const FILL_BATCH = 100;
/** Concurrent fill calls: enough to keep the engine busy on two cores, each call 100 jobs. */
export const FILLERS = 4;
/** Jobs per shallow drain: the reference queue is never deeper than this. */
export const SHALLOW_JOBS = 20_000;
/** A consumer gives up after this many empty receives in a row (1 s long polls each). */
const DRY_POLLS = 3;

export interface Run {
  jobs: number;
  seconds: number;
  errors: number;
  cpu: Cpu;
  notes: string[];
}

export const addRuns = (runs: readonly Run[]): Run => ({
  jobs: runs.reduce((n, r) => n + r.jobs, 0),
  seconds: runs.reduce((n, r) => n + r.seconds, 0),
  errors: runs.reduce((n, r) => n + r.errors, 0),
  cpu: { server: runs.reduce((n, r) => n + r.cpu.server, 0), load: runs.reduce((n, r) => n + r.cpu.load, 0) },
  notes: runs.flatMap((r) => r.notes).slice(0, 5),
});

/**
 * Sends `total` jobs to `base` (a queue's path) in batches of FILL_BATCH from FILLERS concurrent
 * callers. `jobs` is how many the engine answered as sent.
 */
export async function fillQueue(
  post: Post,
  base: string,
  total: number,
  serverMicros: () => Promise<number>,
  fillers = FILLERS,
): Promise<Run> {
  const notes: string[] = [];
  const note = noteTo(notes);
  let claimed = 0;
  let errors = 0;
  const meter = cpuMeter(serverMicros);
  await meter.mark();
  const start = performance.now();
  const filler = async () => {
    while (claimed < total) {
      const n = Math.min(FILL_BATCH, total - claimed);
      claimed += n;
      const t = performance.now();
      errors += await sendBatch(
        post,
        base,
        Array.from({ length: n }, () => ({ body: { t } })),
        note,
      );
    }
  };
  await Promise.all(Array.from({ length: fillers }, filler));
  const seconds = (performance.now() - start) / 1000;
  return { jobs: total - errors, seconds, errors, cpu: await meter.read(), notes };
}

/**
 * CONSUMERS consumers receive up to 10 jobs (1 s long poll) and ack them in one `ack/batch`
 * until `quota` jobs have been received (a few more: each consumer finishes the batch it holds).
 * Time runs from the first receive to the answer of the last ack; `jobs` counts the jobs acked
 * as done. A consumer that meets DRY_POLLS empty receives in a row while short of the quota
 * stops and says so (the queue held fewer jobs than expected).
 */
export async function drainQueue(
  post: Post,
  base: string,
  quota: number,
  serverMicros: () => Promise<number>,
): Promise<Run> {
  const notes: string[] = [];
  const note = noteTo(notes);
  let claimed = 0;
  let acked = 0;
  let errors = 0;
  const meter = cpuMeter(serverMicros);
  await meter.mark();
  const start = performance.now();
  let lastAck = start;
  const consumer = async () => {
    let dry = 0;
    while (claimed < quota) {
      const jobs = await receiveBatch(post, base, note);
      if (jobs === null) {
        errors++;
        continue;
      }
      if (jobs.length === 0) {
        if (++dry >= DRY_POLLS && claimed < quota) {
          note(`${base}: ${DRY_POLLS} empty receives in a row with ${claimed} of ${quota} jobs received`);
          errors++;
          return;
        }
        continue;
      }
      dry = 0;
      claimed += jobs.length;
      const done = await ackBatch(post, base, jobs, note);
      for (const ok of done) {
        if (ok) acked++;
        else errors++;
      }
      lastAck = performance.now();
    }
  };
  await Promise.all(Array.from({ length: CONSUMERS }, consumer));
  // Read after the last long polls have returned (idle waiting: no CPU to speak of).
  return { jobs: acked, seconds: (lastAck - start) / 1000, errors, cpu: await meter.read(), notes };
}

/**
 * The reference for the backlog drain: fresh queues `shallow-<n>` of `primitive`, each filled
 * with `jobs` (SHALLOW_JOBS) jobs (not timed) and drained by the same consumers (timed), until `seconds`
 * of draining have been measured. Returns the drains added up.
 */
export async function shallowDrains(
  post: Post,
  primitive: string,
  seconds: number,
  next: () => number,
  serverMicros: () => Promise<number>,
  jobs = SHALLOW_JOBS,
): Promise<Run> {
  const runs: Run[] = [];
  const fillErrors: Run[] = [];
  while (runs.reduce((s, r) => s + r.seconds, 0) < seconds) {
    const base = `${primitive}/queues/shallow-${next()}`;
    const filled = await fillQueue(post, base, jobs, serverMicros);
    fillErrors.push({ ...filled, jobs: 0, seconds: 0, cpu: { server: 0, load: 0 } });
    runs.push(await drainQueue(post, base, filled.jobs, serverMicros));
  }
  return addRuns([...runs, ...fillErrors]);
}

/** Job counts of queue `name` (`GET …/queues`), or undefined when the listing fails. */
export async function queueCounts(
  port: number,
  primitive: string,
  name: string,
): Promise<Record<string, number> | undefined> {
  const res = await fetch(`http://127.0.0.1:${port}${primitive}/queues`);
  if (!res.ok) return undefined;
  const body = (await res.json()) as { data?: ({ name: string } & Record<string, number>)[] };
  return body.data?.find((q) => q.name === name);
}
