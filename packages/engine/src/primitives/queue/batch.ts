import type { BatchEntryError, BatchResults, Job, SentJob } from "@prim/wire";
import { ServiceError, toServiceError } from "@prim/wire";
import { z } from "zod";
import { parseInput } from "../../core/validation.js";
import { type AnyOperation, dataOp } from "../operation.js";
import type { QueueHandle } from "./handle.js";
import { bodySchema, encodeBody, MAX_BATCH, queueNameSchema } from "./limits.js";
import { sendFields, sendRequest, settleFields, settleRequest } from "./ops.js";
import type { SendRequest, SettleRequest } from "./store.js";

/**
 * The batch forms of send, ack and publish (SQS's answer to two requests per job): up to
 * MAX_BATCH entries in one call. The call itself is checked as a whole (the queue or topic, the
 * array and its length: 400); each entry is then checked on its own with the single route's
 * schema, and an entry that fails answers its own error in its place while the others go on.
 * Each entry counts as one metered operation (`units`).
 */
const queueOp = dataOp<QueueHandle>("queue");

const entries = (what: string) =>
  z
    .array(z.unknown())
    .min(1, `at least one ${what} entry`)
    .max(MAX_BATCH, `at most ${MAX_BATCH} ${what} entries per call`);

/** Operations a batch call counts: one per entry (an invalid call counts one). */
function unitsOf(field: string): (input: unknown) => number {
  return (input) => {
    const list = (input as Record<string, unknown> | null)?.[field];
    return Array.isArray(list) ? Math.min(Math.max(list.length, 1), MAX_BATCH) : 1;
  };
}

/** An entry's failure as the batch answers it: the single route's error and status. */
function entryError(err: unknown): BatchEntryError {
  const e = toServiceError(err);
  return { error: { code: e.code, message: e.message }, status: e.status };
}

/**
 * Checks each entry with `schema` and turns it into a request (`prepare` may refuse it too, a
 * body over its limit: 413); an entry that fails is its error. Field names in messages are
 * the caller's: `messages[3].delay`.
 */
function prepareEach<S extends z.ZodType, R>(
  list: readonly unknown[],
  field: string,
  schema: S,
  prepare: (entry: z.output<S>, name: string) => R,
): (R | BatchEntryError)[] {
  return list.map((entry, i) => {
    const name = `${field}[${i}]`;
    try {
      const parsed = schema.safeParse(entry);
      // A failure is parsed again under the entry's name, for messages naming its fields.
      if (!parsed.success) parseInput(z.strictObject({ [name]: schema }), { [name]: entry });
      return prepare(parsed.data as z.output<S>, name);
    } catch (err) {
      return entryError(err);
    }
  });
}

const isEntryError = (x: unknown): x is BatchEntryError =>
  typeof x === "object" && x !== null && "error" in x && typeof (x as { status?: unknown }).status === "number";

/**
 * Runs the entries that passed their checks (all at once; not at all when none did) and puts
 * each answer back in its entry's place.
 */
async function runValid<R, T>(
  prepared: (R | BatchEntryError)[],
  run: (reqs: R[]) => Promise<readonly (T | BatchEntryError)[]>,
): Promise<(T | BatchEntryError)[]> {
  const reqs = prepared.filter((p): p is R => !isEntryError(p));
  const answers = reqs.length === 0 ? [] : await run(reqs);
  let next = 0;
  return prepared.map((p) => (isEntryError(p) ? p : (answers[next++] as T | BatchEntryError)));
}

/**
 * Batch answers leave bodies out: the caller holds them, and a hundred 256 KiB bodies would be
 * an answer far past the response budget (GET /messages/{job} reads one).
 */
function withoutBody({ body: _body, ...job }: Job): Omit<Job, "body"> {
  return job;
}

const sendEntry = z.strictObject(sendFields);
const settleEntry = z.strictObject(settleFields);
const publishEntry = z.strictObject({ body: bodySchema });

export const queueSendBatch = queueOp({
  name: "queue.send_batch",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "queue_send",
  units: unitsOf("messages"),
  input: z.strictObject({ queue: queueNameSchema, messages: entries("messages") }),
  async run(ctx, input): Promise<BatchResults<Omit<SentJob, "body">>> {
    ctx.audit.target = input.queue;
    const prepared = prepareEach(input.messages, "messages", sendEntry, (e, name) => sendRequest(e, `${name}.body`));
    let deduplicated = 0;
    const data = await runValid(prepared, async (reqs: SendRequest[]) =>
      (await ctx.store.store.sendMany(input.queue, reqs)).map(({ job, deduplicated: hit }) => {
        if (hit) deduplicated++;
        return { ...withoutBody(job), deduplicated: hit };
      }),
    );
    ctx.audit.detail = batchDetail(data, deduplicated);
    return { data };
  },
});

export const queueAckBatch = queueOp({
  name: "queue.ack_batch",
  access: "write",
  destructive: true,
  idempotent: true,
  writesStorage: false,
  tool: "queue_ack",
  units: unitsOf("acks"),
  input: z.strictObject({ queue: queueNameSchema, acks: entries("acks") }),
  async run(ctx, input): Promise<BatchResults<Omit<Job, "body">>> {
    ctx.audit.target = input.queue;
    const prepared = prepareEach(input.acks, "acks", settleEntry, settleRequest);
    const data = await runValid(prepared, async (reqs: SettleRequest[]) =>
      (await ctx.store.store.settleMany(input.queue, reqs)).map((s) =>
        s instanceof ServiceError ? entryError(s) : withoutBody(s),
      ),
    );
    ctx.audit.detail = batchDetail(data);
    return { data };
  },
});

export const queuePublishBatch = queueOp({
  name: "queue.publish_batch",
  access: "write",
  destructive: false,
  idempotent: false,
  writesStorage: true,
  tool: "queue_send",
  units: unitsOf("messages"),
  input: z.strictObject({ topic: queueNameSchema, messages: entries("messages") }),
  async run(ctx, input): Promise<BatchResults<{ delivered: number }>> {
    ctx.audit.target = input.topic;
    const prepared = prepareEach(input.messages, "messages", publishEntry, (e, name) =>
      encodeBody(e.body, `${name}.body`),
    );
    let queues: string[] = [];
    const data = await runValid(prepared, async (bodies: string[]) => {
      const published = await ctx.store.store.publishMany(input.topic, bodies);
      queues = published.queues;
      return bodies.map(() => ({ delivered: published.delivered }));
    });
    ctx.audit.detail = { ...batchDetail(data), queues };
    return { data };
  },
});

/** The audit entry's detail of a batch: how many entries, and how many of them failed. */
function batchDetail(data: readonly unknown[], deduplicated?: number): Record<string, unknown> {
  const failed = data.filter(isEntryError).length;
  const detail: Record<string, unknown> = { entries: data.length, failed };
  if (deduplicated) detail.deduplicated = deduplicated;
  return detail;
}

export const QUEUE_BATCH_OPERATIONS: readonly AnyOperation[] = [queueSendBatch, queueAckBatch, queuePublishBatch];
