import { z } from "zod";
import { decodeCursor, LIST_PAGE, limitSchema, type Page } from "../../core/pagination.js";
import { budgetedPage, ResponseBudget } from "../../core/response-budget.js";
import { type AnyOperation, dataOp } from "../operation.js";
import type { QueueHandle } from "./handle.js";
import {
  bodySchema,
  boundedDuration,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  encodeBody,
  MAX_ATTEMPTS_LIMIT,
  MAX_DEDUPE_KEY,
  MAX_DELAY_MS,
  MAX_LEASE_MS,
  MAX_PRIORITY,
  MAX_RECEIVE,
  MAX_WAIT_MS,
  queueNameSchema,
} from "./limits.js";
import type { Job, QueueCounts, SendRequest, SettleRequest } from "./store.js";

const queueOp = dataOp<QueueHandle>("queue");
const jobIdSchema = z.string().min(1).max(64);
const leaseToken = z.string().min(1, "required").max(128);
const leaseDuration = boundedDuration(1, MAX_LEASE_MS, "lease");

/** A send's fields besides the queue: one send, or one entry of a batch. */
export const sendFields = {
  body: bodySchema,
  delay: boundedDuration(0, MAX_DELAY_MS, "delay").default(0),
  dedupe_key: z.string().min(1).max(MAX_DEDUPE_KEY).optional(),
  priority: z.number().int().min(-MAX_PRIORITY).max(MAX_PRIORITY).default(0),
  max_attempts: z.number().int().min(1).max(MAX_ATTEMPTS_LIMIT).default(DEFAULT_MAX_ATTEMPTS),
};

/** A settle's fields besides the queue: one ack, or one entry of a batch. */
export const settleFields = {
  job: jobIdSchema,
  lease_token: leaseToken,
  action: z.enum(["ack", "retry", "fail", "dead"]).default("ack"),
  in: boundedDuration(0, MAX_DELAY_MS, "in").optional(),
  error: z
    .string()
    .max(64 * 1024)
    .optional(),
};

type SendFields = z.output<z.ZodObject<typeof sendFields>>;
type SettleFields = z.output<z.ZodObject<typeof settleFields>>;

/** The store's request for a validated send (the body encoded: 413 over its limit). */
export function sendRequest(input: SendFields, field = "body"): SendRequest {
  return {
    body: encodeBody(input.body, field),
    value: input.body,
    delayMs: input.delay,
    priority: input.priority,
    maxAttempts: input.max_attempts,
    dedupeKey: input.dedupe_key ?? null,
  };
}

export function settleRequest(input: SettleFields): SettleRequest {
  return { job: input.job, token: input.lease_token, action: input.action, inMs: input.in, error: input.error };
}

export const queueSend = queueOp({
  name: "queue.send",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "queue_send",
  input: z.strictObject({ queue: queueNameSchema, ...sendFields }),
  async run(ctx, input): Promise<Job & { deduplicated: boolean }> {
    ctx.audit.target = input.queue;
    const { job, deduplicated } = await ctx.store.store.send(input.queue, sendRequest(input));
    ctx.audit.target = `${input.queue}/${job.id}`;
    if (deduplicated) ctx.audit.detail = { deduplicated: true };
    return { ...job, deduplicated };
  },
});

export const queueReceive = queueOp({
  name: "queue.receive",
  // Leases jobs: they are not ready for anyone else until settled or the lease runs out.
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: false,
  tool: "queue_receive",
  input: z.strictObject({
    queue: queueNameSchema,
    lease: leaseDuration.default(DEFAULT_LEASE_MS),
    wait: boundedDuration(0, MAX_WAIT_MS, "wait").default(0),
    max: z.number().int().min(1).max(MAX_RECEIVE).default(1),
  }),
  async run(ctx, input): Promise<{ data: Job[] }> {
    ctx.audit.target = input.queue;
    const { store, waiters } = ctx.store;
    let jobs = await store.receive(input.queue, input.max, input.lease);
    if (jobs.length === 0 && input.wait > 0) {
      jobs = await waiters.park(input.queue, input.max, input.lease, input.wait, ctx.signal);
    }
    ctx.audit.detail = { received: jobs.map((j) => j.id) };
    return { data: jobs };
  },
});

export const queueSettle = queueOp({
  name: "queue.ack",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "queue_ack",
  input: z.strictObject({ queue: queueNameSchema, ...settleFields }),
  run(ctx, input): Promise<Job> {
    ctx.audit.target = `${input.queue}/${input.job}`;
    ctx.audit.detail = { action: input.action };
    return ctx.store.store.settle(input.queue, settleRequest(input));
  },
});

export const queueHeartbeat = queueOp({
  name: "queue.heartbeat",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: false,
  tool: "queue_ack",
  input: z.strictObject({
    queue: queueNameSchema,
    job: jobIdSchema,
    lease_token: leaseToken,
    extend: leaseDuration.optional(),
  }),
  run(ctx, input): Promise<Job> {
    ctx.audit.target = `${input.queue}/${input.job}`;
    return ctx.store.store.heartbeat(input.queue, input.job, input.lease_token, input.extend);
  },
});

export const queueRequeue = queueOp({
  name: "queue.requeue",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: false,
  tool: "queue_ack",
  input: z.strictObject({ queue: queueNameSchema, job: jobIdSchema }),
  run(ctx, input): Promise<Job> {
    ctx.audit.target = `${input.queue}/${input.job}`;
    return ctx.store.store.requeue(input.queue, input.job);
  },
});

export const queuePurge = queueOp({
  name: "queue.purge",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "queue_ack",
  input: z.strictObject({
    queue: queueNameSchema,
    status: z.enum(["done", "dead"]),
    older_than: boundedDuration(0, Number.MAX_SAFE_INTEGER, "older_than").default(0),
  }),
  async run(ctx, input): Promise<{ purged: number }> {
    ctx.audit.target = input.queue;
    ctx.audit.detail = { status: input.status };
    const purged = await ctx.store.store.purge(input.queue, input.status, input.older_than);
    return { purged };
  },
});

export const queueList = queueOp({
  name: "queue.queues",
  access: "read",
  writesStorage: false,
  tool: "queue_receive",
  input: z.strictObject({}),
  run(ctx): { data: QueueCounts[] } {
    return { data: ctx.store.store.counts() };
  },
});

const cursorSchema = z.object({ s: z.number().int() });

export const queueMessages = queueOp({
  name: "queue.messages",
  access: "read",
  writesStorage: false,
  tool: "queue_receive",
  input: z.strictObject({
    queue: queueNameSchema,
    status: z.enum(["ready", "leased", "done", "dead"]).optional(),
    limit: limitSchema(LIST_PAGE),
    cursor: z.string().optional(),
  }),
  run(ctx, input): Page<Job> {
    ctx.audit.target = input.queue;
    const after = input.cursor === undefined ? 0 : decodeCursor(input.cursor, cursorSchema).s;
    // A page ends early at the response budget; next_cursor continues it.
    const budget = new ResponseBudget();
    const rows = ctx.store.store.list(input.queue, input.status, after, input.limit, budget);
    return budgetedPage(
      rows,
      input.limit,
      budget,
      ({ seq: _seq, ...job }) => job,
      (row) => ({ s: row.seq }),
    );
  },
});

export const queueGetJob = queueOp({
  name: "queue.get",
  access: "read",
  writesStorage: false,
  tool: "queue_receive",
  input: z.strictObject({ queue: queueNameSchema, job: jobIdSchema }),
  run(ctx, input): Job {
    ctx.audit.target = `${input.queue}/${input.job}`;
    return ctx.store.store.get(input.queue, input.job);
  },
});

export const queueSubscribe = queueOp({
  name: "queue.subscribe",
  access: "write",
  destructive: false,
  idempotent: true,
  writesStorage: false,
  tool: "queue_receive",
  input: z.strictObject({ topic: queueNameSchema, queue: queueNameSchema }),
  async run(ctx, input) {
    ctx.audit.target = `${input.topic}/${input.queue}`;
    const { created, created_at } = await ctx.store.store.subscribe(input.topic, input.queue);
    return { topic: input.topic, queue: input.queue, created_at, created };
  },
});

export const queueUnsubscribe = queueOp({
  name: "queue.unsubscribe",
  access: "write",
  destructive: false,
  idempotent: true,
  writesStorage: false,
  tool: "queue_receive",
  input: z.strictObject({ topic: queueNameSchema, queue: queueNameSchema }),
  run(ctx, input): Promise<void> {
    ctx.audit.target = `${input.topic}/${input.queue}`;
    return ctx.store.store.unsubscribe(input.topic, input.queue);
  },
});

export const queuePublish = queueOp({
  name: "queue.publish",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "queue_send",
  input: z.strictObject({ topic: queueNameSchema, body: bodySchema }),
  async run(ctx, input): Promise<{ delivered: number }> {
    ctx.audit.target = input.topic;
    const { delivered, queues } = await ctx.store.store.publish(input.topic, encodeBody(input.body));
    ctx.audit.detail = { queues };
    return { delivered };
  },
});

/** The single-job operations (batch.ts has the batch forms). */
export const SINGLE_OPERATIONS: readonly AnyOperation[] = [
  queueSend,
  queueReceive,
  queueSettle,
  queueHeartbeat,
  queueRequeue,
  queuePurge,
  queueList,
  queueMessages,
  queueGetJob,
  queueSubscribe,
  queueUnsubscribe,
  queuePublish,
];
