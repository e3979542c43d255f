import type { FastifyReply } from "fastify";
import { sentJob, subscription } from "../responses/shapes.js";
import type { RestRoute } from "../route.js";

const tag = "queue";
const base = "/v1/primitives/:id";
const q = `${base}/queues/:queue`;
const job = { queue: "queue", job: "job" } as const;

/** A send answers 201 with the new job, or 200 when `dedupe_key` matched a pending one. */
function respondSend(reply: FastifyReply, result: unknown): FastifyReply {
  const deduplicated = (result as { deduplicated: boolean }).deduplicated;
  return reply.code(deduplicated ? 200 : 201).send(result);
}

/** A new subscription is 201; subscribing again is 200 with the existing one. */
function respondSubscribe(reply: FastifyReply, result: unknown): FastifyReply {
  const { created, ...subscription } = result as { created: boolean };
  return reply.code(created ? 201 : 200).send(subscription);
}

export const QUEUE_ROUTES: readonly RestRoute[] = [
  {
    method: "GET",
    url: `${base}/queues`,
    op: "queue.queues",
    target: "id",
    from: "query",
    summary: "Queues with job counts by status",
    tag,
  },
  {
    method: "POST",
    url: `${q}/messages`,
    op: "queue.send",
    target: "id",
    pathInput: { queue: "queue" },
    from: "body",
    respond: respondSend,
    responses: {
      201: { description: "Sent", json: sentJob },
      200: { description: "A pending job had this dedupe_key (deduplicated: true)", json: sentJob },
    },
    summary: "Send a job (201, or 200 with deduplicated: true)",
    tag,
  },
  {
    method: "GET",
    url: `${q}/messages`,
    op: "queue.messages",
    target: "id",
    pathInput: { queue: "queue" },
    from: "query",
    summary: "List jobs in send order",
    tag,
  },
  {
    method: "GET",
    url: `${q}/messages/:job`,
    op: "queue.get",
    target: "id",
    pathInput: job,
    from: "none",
    summary: "One job",
    tag,
  },
  {
    method: "POST",
    url: `${q}/receive`,
    op: "queue.receive",
    target: "id",
    pathInput: { queue: "queue" },
    from: "body",
    abortable: true,
    summary: "Lease ready jobs (long poll with wait)",
    tag,
  },
  {
    method: "POST",
    url: `${q}/messages/:job/ack`,
    op: "queue.ack",
    target: "id",
    pathInput: job,
    from: "body",
    summary: "Settle a leased job: ack, retry, fail or dead",
    tag,
  },
  {
    method: "POST",
    url: `${q}/messages/:job/heartbeat`,
    op: "queue.heartbeat",
    target: "id",
    pathInput: job,
    from: "body",
    summary: "Extend a lease",
    tag,
  },
  {
    method: "POST",
    url: `${q}/messages/:job/requeue`,
    op: "queue.requeue",
    target: "id",
    pathInput: job,
    from: "body",
    summary: "Move a dead job back to ready",
    tag,
  },
  {
    method: "POST",
    url: `${q}/purge`,
    op: "queue.purge",
    target: "id",
    pathInput: { queue: "queue" },
    from: "body",
    summary: "Delete done or dead jobs",
    tag,
  },
  {
    method: "POST",
    url: `${base}/topics/:topic/subscriptions`,
    op: "queue.subscribe",
    target: "id",
    pathInput: { topic: "topic" },
    from: "body",
    respond: respondSubscribe,
    responses: {
      201: { description: "Subscribed", json: subscription },
      200: { description: "Already subscribed", json: subscription },
    },
    summary: "Subscribe a queue to a topic",
    tag,
  },
  {
    method: "DELETE",
    url: `${base}/topics/:topic/subscriptions/:queue`,
    op: "queue.unsubscribe",
    target: "id",
    pathInput: { topic: "topic", queue: "queue" },
    from: "none",
    status: 204,
    summary: "Unsubscribe a queue from a topic",
    tag,
  },
  {
    method: "POST",
    url: `${base}/topics/:topic/publish`,
    op: "queue.publish",
    target: "id",
    pathInput: { topic: "topic" },
    from: "body",
    summary: "Publish: one job in each subscribed queue",
    tag,
  },
];
