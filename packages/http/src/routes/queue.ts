import { MAX_BATCH, MAX_BODY_BYTES } from "@prim/engine";
import { sentJob, subscription } from "@prim/wire/schemas";
import type { FastifyReply } from "fastify";
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

/** What every batch route's OpenAPI text says of its entries, its answer and its metering. */
function batchRules(what: string, single: string): string {
  return [
    `At most ${MAX_BATCH} entries (an empty or longer array, or a bad ${what === "acks" ? "queue" : "queue or topic"} name, is 400 for the whole call; so is a request body over the JSON limit, 413).`,
    `Each entry is checked with ${single}'s rules on its own: an invalid entry (400), a body over ${MAX_BODY_BYTES / 1024} KiB of JSON (413) or, for acks, a lease that ran out (410 lease_expired), a wrong or stale token (409 conflict) or a missing job (404 not_found) fails only itself, answered in its place as \`{ error: { code, message }, status }\`; the others go on.`,
    "The answer is 200 with `data`: one entry per entry sent, in order. Jobs in it carry every field but `body`.",
    `Metering (cloud): each entry counts as one operation (a batch of ${MAX_BATCH} counts ${MAX_BATCH}); the rate limit takes one request. On Starter a batch is refused (429 plan_limit) when its entries would pass the month's cap.`,
  ].join(" ");
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
    method: "POST",
    url: `${q}/messages/batch`,
    op: "queue.send_batch",
    target: "id",
    pathInput: { queue: "queue" },
    from: "body",
    summary: "Send up to 100 jobs in one transaction, each answered in order",
    description: `${batchRules("messages", "a single send")} The jobs that pass their checks are written in one transaction: all of them or, if the call fails, none. A dedupe_key that matches a pending job (or an earlier entry of the same batch) answers that job with deduplicated: true.`,
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
    url: `${q}/ack/batch`,
    op: "queue.ack_batch",
    target: "id",
    pathInput: { queue: "queue" },
    from: "body",
    summary: "Settle up to 100 leased jobs, each on its own",
    description: `Entries are \`{ job, lease_token, action?, in?, error? }\` as for a single ack. ${batchRules("acks", "a single ack")} Entries are settled in one commit, each independently: a failed entry wrote nothing, the others are settled.`,
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
  {
    method: "POST",
    url: `${base}/topics/:topic/publish/batch`,
    op: "queue.publish_batch",
    target: "id",
    pathInput: { topic: "topic" },
    from: "body",
    summary: "Publish up to 100 messages, each to every subscribed queue",
    description: `Entries are \`{ body }\`; each answers \`{ delivered }\` as a single publish does. ${batchRules("messages", "a single publish")} Every job of the call is written in one transaction.`,
    tag,
  },
];
