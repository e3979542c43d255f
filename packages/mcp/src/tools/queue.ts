import { toolInfo } from "@prim/wire";
import { z } from "zod";
import { cursorArg, durationArg, limitArg, primitiveArg } from "./common.js";
import { noResult, subscribeResult } from "./output.js";
import type { ToolSpec } from "./spec.js";

const p = primitiveArg("queue");
const queue = z.string().describe("Queue name (a-z, 0-9, '-', '_', '.'); queues exist once something is sent.");
const topic = z.string().describe("Topic name.");
const job = z.string().describe("Job id (job_…).");
const token = z.string().describe("The lease_token the job was received with.");

/** Batch entries are checked one by one by the engine (a bad entry fails only itself). */
const sendEntry = z
  .looseObject({
    body: z.unknown().optional().describe("The job's payload: any JSON value (at most 256 KiB)."),
    delay: z.union([z.string(), z.number()]).optional(),
    priority: z.number().int().optional(),
    max_attempts: z.number().int().optional(),
    dedupe_key: z.string().optional(),
  })
  .describe("One job: `body`, and optionally `delay`, `priority`, `max_attempts`, `dedupe_key` as for a send.");
const ackEntry = z
  .looseObject({
    job: z.string(),
    lease_token: z.string(),
    action: z.enum(["ack", "retry", "fail", "dead"]).optional(),
    in: z.union([z.string(), z.number()]).optional(),
    error: z.string().optional(),
  })
  .describe("One settle: `job` and its `lease_token`, optionally `action` (default ack), `in`, `error`.");
export const QUEUE_TOOLS: ToolSpec[] = [
  {
    ...toolInfo("queue_send"),
    shape: {
      primitive: p,
      action: z.enum(["send", "publish", "send_batch", "publish_batch"]).optional().describe('Default "send".'),
      queue: queue.optional(),
      topic: topic.optional(),
      body: z.unknown().optional().describe("The job's payload: any JSON value (at most 256 KiB)."),
      delay: durationArg("Make the job ready only after this long (or integer ms)"),
      priority: z.number().int().min(-1000).max(1000).optional().describe("Higher is received first (default 0)."),
      max_attempts: z.number().int().min(1).optional().describe("Deliveries before the job is dead (default 5)."),
      dedupe_key: z.string().optional().describe("Skip the send if a pending job has this key."),
      messages: z.array(sendEntry).optional().describe('"send_batch" and "publish_batch": the entries (1 to 100).'),
    },
    actions: {
      send: { op: "queue.send", fields: ["queue", "body", "delay", "priority", "max_attempts", "dedupe_key"] },
      publish: { op: "queue.publish", fields: ["topic", "body"] },
      send_batch: { op: "queue.send_batch", fields: ["queue", "messages"] },
      publish_batch: { op: "queue.publish_batch", fields: ["topic", "messages"] },
    },
  },
  {
    ...toolInfo("queue_receive"),
    shape: {
      primitive: p,
      action: z
        .enum(["receive", "queues", "list", "get", "subscribe", "unsubscribe"])
        .optional()
        .describe('Default "receive".'),
      queue: queue.optional(),
      topic: topic.optional(),
      job: job.optional(),
      max: z.number().int().min(1).max(100).optional().describe("Jobs to lease at most (default 1)."),
      lease: durationArg("How long the jobs stay leased (default 30s)"),
      wait: durationArg("Wait up to this long for a job (at most 30s; default 0)"),
      status: z.enum(["ready", "leased", "done", "dead"]).optional().describe('"list": only jobs in this status.'),
      limit: limitArg(200, 50),
      cursor: cursorArg,
    },
    actions: {
      receive: { op: "queue.receive", fields: ["queue", "max", "lease", "wait"] },
      queues: { op: "queue.queues" },
      list: { op: "queue.messages", fields: ["queue", "status", "limit", "cursor"] },
      get: { op: "queue.get", fields: ["queue", "job"] },
      subscribe: { op: "queue.subscribe", fields: ["topic", "queue"], result: subscribeResult },
      unsubscribe: { op: "queue.unsubscribe", fields: ["topic", "queue"], result: noResult },
    },
  },
  {
    ...toolInfo("queue_ack"),
    shape: {
      primitive: p,
      action: z
        .enum(["ack", "retry", "fail", "dead", "heartbeat", "requeue", "purge", "ack_batch"])
        .optional()
        .describe('Default "ack".'),
      queue,
      job: job.optional(),
      lease_token: token.optional(),
      in: durationArg("retry/fail: ready again after this long"),
      error: z.string().optional().describe("Why the job failed (kept as last_error)."),
      extend: durationArg("heartbeat: new lease length from now"),
      status: z.enum(["done", "dead"]).optional().describe('"purge": which finished jobs to delete.'),
      older_than: durationArg("purge: only jobs finished at least this long ago"),
      acks: z.array(ackEntry).optional().describe('"ack_batch": the settles (1 to 100).'),
    },
    actions: {
      ack: { op: "queue.ack", fields: ["queue", "job", "lease_token", "error"], input: () => ({ action: "ack" }) },
      retry: {
        op: "queue.ack",
        fields: ["queue", "job", "lease_token", "in", "error"],
        input: () => ({ action: "retry" }),
      },
      fail: {
        op: "queue.ack",
        fields: ["queue", "job", "lease_token", "in", "error"],
        input: () => ({ action: "fail" }),
      },
      dead: { op: "queue.ack", fields: ["queue", "job", "lease_token", "error"], input: () => ({ action: "dead" }) },
      heartbeat: { op: "queue.heartbeat", fields: ["queue", "job", "lease_token", "extend"] },
      requeue: { op: "queue.requeue", fields: ["queue", "job"] },
      purge: { op: "queue.purge", fields: ["queue", "status", "older_than"] },
      ack_batch: { op: "queue.ack_batch", fields: ["queue", "acks"] },
    },
  },
];
