// The queue benchmark's closed loops, one measured slice each: Prim's single-message loop and
// its batch loop over HTTP, and BullMQ's `add` and `addBulk` loops. See bench/queue.ts.
import { Queue, Worker } from "bullmq";
import {
  CONSUMERS,
  cpuMeter,
  InFlight,
  measureWindow,
  noteTo,
  type Post,
  PRODUCERS,
  redisCpuMicros,
  type Slice,
  type Tally,
} from "./queue-common.js";
import type { RedisServer } from "./redis-server.js";

/** Jobs a consumer leases per receive (the API's batch size; each job is still acked on its own). */
const RECEIVE_MAX = 10;
/** Jobs per batch send, per receive and per batch ack in the batch loop; jobs per `addBulk`. */
export const BATCH = 10;
/**
 * Jobs a batch loop may have sent and not yet completed (InFlight): twice what its consumers
 * hold at once (8 × 10), so they always find a full batch ready, and the queue stays shallow.
 */
export const WINDOW = 2 * CONSUMERS * BATCH;

/**
 * One slice of the Prim loop on its own queue (`work-<slice>`, so no backlog carries over).
 * A job counts once the answer to its ack has arrived: the engine has committed it as done.
 */
export async function primSlice(
  post: Post,
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

export interface LeasedJob {
  id: string;
  lease_token: string;
  body: { t: number };
}

/**
 * Sends `messages` in one `messages/batch` call; returns how many entries failed (all of them
 * when the call did), describing the first failure to `note`.
 */
export async function sendBatch(
  post: Post,
  base: string,
  messages: readonly { body: unknown }[],
  note: (s: string) => void,
): Promise<number> {
  const res = await post(`${base}/messages/batch`, { messages });
  const data = res.body?.data as ({ id?: string; error?: unknown } | undefined)[] | undefined;
  if (res.status !== 200 || !Array.isArray(data) || data.length !== messages.length) {
    note(`messages/batch: ${res.status} ${JSON.stringify(res.body)}`);
    return messages.length;
  }
  let failed = 0;
  for (const entry of data) {
    if (entry?.error !== undefined || typeof entry?.id !== "string") {
      failed++;
      note(`messages/batch entry: ${JSON.stringify(entry)}`);
    }
  }
  return failed;
}

/**
 * Acks `jobs` in one `ack/batch` call. Returns, per job, whether the engine answered it as
 * done (same id, in its place, status `done`); a failure is described to `note`.
 */
export async function ackBatch(
  post: Post,
  base: string,
  jobs: readonly LeasedJob[],
  note: (s: string) => void,
): Promise<boolean[]> {
  const acks = jobs.map((job) => ({ job: job.id, lease_token: job.lease_token }));
  const res = await post(`${base}/ack/batch`, { acks });
  const data = res.body?.data as ({ id?: string; status?: unknown; error?: unknown } | undefined)[] | undefined;
  if (res.status !== 200 || !Array.isArray(data) || data.length !== jobs.length) {
    note(`ack/batch: ${res.status} ${JSON.stringify(res.body)}`);
    return jobs.map(() => false);
  }
  return jobs.map((job, i) => {
    const entry = data[i];
    const ok = entry?.error === undefined && entry?.id === job.id && entry?.status === "done";
    if (!ok) note(`ack/batch entry ${i} for ${job.id}: ${JSON.stringify(entry)}`);
    return ok;
  });
}

/** A receive of up to BATCH jobs with a 1 s long poll; null (described to `note`) when it failed. */
export async function receiveBatch(post: Post, base: string, note: (s: string) => void): Promise<LeasedJob[] | null> {
  const got = await post(`${base}/receive`, { wait: "1s", lease: "30s", max: BATCH });
  if (got.status !== 200 || !Array.isArray(got.body?.data)) {
    note(`receive: ${got.status} ${JSON.stringify(got.body)}`);
    return null;
  }
  return got.body.data as LeasedJob[];
}

/**
 * One slice of Prim's batch loop on its own queue (`batch-<slice>`): producers send batches of
 * BATCH jobs (`messages/batch`, all stamped with the time just before the call), consumers
 * receive up to BATCH (long poll) and ack what they got in one `ack/batch`. A job counts once
 * the answer to that ack has arrived with the job done.
 */
export async function primBatchSlice(
  post: Post,
  primitive: string,
  slice: Slice,
  serverMicros: () => Promise<number>,
): Promise<Tally> {
  const base = `${primitive}/queues/batch-${slice.index}`;
  const latencies: number[] = [];
  const notes: string[] = [];
  const note = noteTo(notes);
  let errors = 0;
  const measureFrom = performance.now() + slice.warmup * 1000;
  const end = measureFrom + slice.seconds * 1000;
  const inFlight = new InFlight(WINDOW, end);
  const producer = async () => {
    while (performance.now() < end && (await inFlight.take(BATCH))) {
      const t = performance.now();
      const messages = Array.from({ length: BATCH }, () => ({ body: { t } }));
      const failed = await sendBatch(post, base, messages, note);
      errors += failed;
      inFlight.done(failed);
    }
  };
  const consumer = async () => {
    while (performance.now() < end) {
      const jobs = await receiveBatch(post, base, note);
      if (jobs === null) {
        errors++;
        continue;
      }
      if (jobs.length === 0) continue;
      const done = await ackBatch(post, base, jobs, note);
      const now = performance.now();
      inFlight.done(jobs.length);
      jobs.forEach((job, i) => {
        if (!done[i]) errors++;
        else if (job.body.t >= measureFrom && now <= end) latencies.push(now - job.body.t);
      });
    }
  };
  const measured = measureWindow(cpuMeter(serverMicros), measureFrom, end);
  await Promise.all([...Array.from({ length: PRODUCERS }, producer), ...Array.from({ length: CONSUMERS }, consumer)]);
  inFlight.close();
  return { latencies, seconds: slice.seconds, errors, cpu: await measured, notes };
}

/**
 * One slice of the same loop on BullMQ, on a fresh queue, with an empty processor. Single
 * (`bulk` false): 8 producers calling `add`, 8 workers with concurrency 1. Bulk: 8 producers
 * calling `addBulk` with BATCH jobs (stamped with the time just before the call), 8 workers with
 * concurrency BATCH — 80 jobs in flight at most, as Prim's 8 consumers leasing BATCH each.
 * A job counts at the worker's `completed` event, which BullMQ emits once `moveToCompleted` has
 * answered: its completion has reached Redis. Jobs are added with `removeOnComplete: true`, so
 * that same call deletes them.
 */
export async function bullmqSlice(redis: RedisServer, slice: Slice, bulk: boolean): Promise<Tally> {
  const connection = { host: "127.0.0.1", port: redis.port };
  const name = `prim-bench-${slice.index}`;
  const queue = new Queue(name, { connection });
  const latencies: number[] = [];
  let errors = 0;
  const concurrency = bulk ? BATCH : 1;
  const workers = Array.from(
    { length: CONSUMERS },
    () => new Worker(name, async () => {}, { connection, concurrency, autorun: false }),
  );
  await Promise.all([queue.waitUntilReady(), ...workers.map((w) => w.waitUntilReady())]);
  const measureFrom = performance.now() + slice.warmup * 1000;
  const end = measureFrom + slice.seconds * 1000;
  const inFlight = bulk ? new InFlight(WINDOW, end) : null;
  for (const worker of workers) {
    worker.on("failed", () => {
      errors++;
      inFlight?.done(1);
    });
    worker.on("completed", (job) => {
      const now = performance.now();
      inFlight?.done(1);
      const t = (job.data as { t: number }).t;
      if (t >= measureFrom && now <= end) latencies.push(now - t);
    });
    void worker.run();
  }
  const single = async () => {
    while (performance.now() < end) {
      try {
        await queue.add("job", { t: performance.now() }, { removeOnComplete: true });
      } catch {
        errors++;
      }
    }
  };
  const batched = async () => {
    while (performance.now() < end && (await inFlight?.take(BATCH))) {
      const t = performance.now();
      const jobs = Array.from({ length: BATCH }, () => ({
        name: "job",
        data: { t },
        opts: { removeOnComplete: true },
      }));
      try {
        await queue.addBulk(jobs);
      } catch {
        errors += BATCH;
        inFlight?.done(BATCH);
      }
    }
  };
  const client = await queue.client;
  const measured = measureWindow(
    cpuMeter(() => redisCpuMicros(client)),
    measureFrom,
    end,
  );
  await Promise.all(Array.from({ length: PRODUCERS }, bulk ? batched : single));
  inFlight?.close();
  const cpu = await measured;
  await Promise.all(workers.map((w) => w.close()));
  await queue.obliterate({ force: true });
  await queue.close();
  return { latencies, seconds: slice.seconds, errors, cpu };
}
