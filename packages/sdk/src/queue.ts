import type {
  Job,
  JobStatus,
  OperationResult,
  Page,
  QueueCounts,
  SentJob,
  SettleAction,
  Subscription,
} from "@prim/wire";
import { everyItem, type PageOptions } from "./pages.js";
import { PrimitiveClient, seg } from "./primitive-client.js";

/** A duration: `250ms`, `30s`, `5m`, `1h`, `7d`, or a number of milliseconds. */
export type Duration = string | number;

export interface SendOptions {
  /** Ready only after this long. */
  delay?: Duration;
  /** A pending job with this key answers instead of a new one (`deduplicated: true`). */
  dedupeKey?: string;
  /** Higher is received first (-1000..1000, default 0). */
  priority?: number;
  maxAttempts?: number;
}

export interface ReceiveOptions {
  /** How long the lease lasts (default 30s). */
  lease?: Duration;
  /** Long poll: wait up to this long for a job (default: answer at once). */
  wait?: Duration;
  /** Up to this many jobs (1..100, default 1). */
  max?: number;
  /** Ends the wait: the call rejects with the signal's reason (an AbortError). */
  signal?: AbortSignal;
}

export interface SettleOptions {
  /** `retry`: ready again after this long (default: the backoff). */
  in?: Duration;
  /** Recorded as the job's `last_error`. */
  error?: string;
}

/** One job of `sendBatch`: its body and the options of a single send. */
export interface BatchMessage extends SendOptions {
  body: unknown;
}

/** One settle of `ackBatch`: a leased job, the action (default `ack`) and its options. */
export interface BatchAck extends SettleOptions {
  job: Lease;
  action?: SettleAction;
}

/** A leased job, or its id and lease token. */
export type Lease = Pick<Job, "id"> & { lease_token?: string };

function tokenOf(job: Lease): string {
  if (job.lease_token === undefined) throw new TypeError(`job ${job.id}: no lease_token (settle a received job)`);
  return job.lease_token;
}

/** The queue routes of one primitive: named queues with leases, and topics. */
export class QueueClient extends PrimitiveClient {
  private q(queue: string): string {
    return `${this.base}/queues/${seg(queue)}`;
  }

  private job(queue: string, id: string): string {
    return `${this.q(queue)}/messages/${seg(id)}`;
  }

  /** Every queue with its job counts by status. */
  async queues(): Promise<QueueCounts[]> {
    return (await this.transport.request<OperationResult<"queue.queues">>("GET", `${this.base}/queues`)).data;
  }

  send(queue: string, body: unknown, options: SendOptions = {}): Promise<SentJob> {
    return this.transport.request("POST", `${this.q(queue)}/messages`, {
      body: {
        body,
        delay: options.delay,
        dedupe_key: options.dedupeKey,
        priority: options.priority,
        max_attempts: options.maxAttempts,
      },
    });
  }

  /**
   * Sends up to 100 jobs in one transaction. Each entry answers in order: its job (without
   * `body`; `deduplicated` as for one send) or its own `{ error, status }` — an invalid entry or
   * a body over the limit fails only itself. Each entry counts as one operation.
   */
  async sendBatch(
    queue: string,
    messages: readonly BatchMessage[],
  ): Promise<OperationResult<"queue.send_batch">["data"]> {
    const body = {
      messages: messages.map((m) => ({
        body: m.body,
        delay: m.delay,
        dedupe_key: m.dedupeKey,
        priority: m.priority,
        max_attempts: m.maxAttempts,
      })),
    };
    const answer = await this.transport.request<OperationResult<"queue.send_batch">>(
      "POST",
      `${this.q(queue)}/messages/batch`,
      { body },
    );
    return answer.data;
  }

  /**
   * Settles up to 100 leased jobs, each on its own: every entry answers in order, the settled
   * job (without `body`) or its own `{ error, status }` (410 lease_expired, 409 conflict, 404).
   */
  async ackBatch(queue: string, acks: readonly BatchAck[]): Promise<OperationResult<"queue.ack_batch">["data"]> {
    const body = {
      acks: acks.map((a) => ({
        job: a.job.id,
        lease_token: tokenOf(a.job),
        action: a.action,
        in: a.in,
        error: a.error,
      })),
    };
    const answer = await this.transport.request<OperationResult<"queue.ack_batch">>(
      "POST",
      `${this.q(queue)}/ack/batch`,
      { body },
    );
    return answer.data;
  }

  /** Leases ready jobs (each with its `lease_token`); empty when none came within `wait`. */
  async receive(queue: string, options: ReceiveOptions = {}): Promise<Job[]> {
    const answer = await this.transport.request<OperationResult<"queue.receive">>("POST", `${this.q(queue)}/receive`, {
      body: { lease: options.lease, wait: options.wait, max: options.max },
      signal: options.signal,
    });
    return answer.data;
  }

  /**
   * Jobs as they come: long-polls (`wait`, default 20s) again and again, yielding each leased
   * job. Ends, without an error, when `signal` aborts; settle each job before the next.
   */
  async *jobs(queue: string, options: ReceiveOptions = {}): AsyncGenerator<Job> {
    const { signal } = options;
    while (signal?.aborted !== true) {
      let batch: Job[];
      try {
        batch = await this.receive(queue, { wait: "20s", ...options });
      } catch (err) {
        if (signal?.aborted) return;
        throw err;
      }
      yield* batch;
    }
  }

  /** Settles a leased job; `action` is `ack` (done), `retry`, `fail` (retry or dead) or `dead`. */
  settle(queue: string, job: Lease, action: SettleAction, options: SettleOptions = {}): Promise<Job> {
    return this.transport.request("POST", `${this.job(queue, job.id)}/ack`, {
      body: { lease_token: tokenOf(job), action, in: options.in, error: options.error },
    });
  }

  ack(queue: string, job: Lease): Promise<Job> {
    return this.settle(queue, job, "ack");
  }

  retry(queue: string, job: Lease, options: SettleOptions = {}): Promise<Job> {
    return this.settle(queue, job, "retry", options);
  }

  fail(queue: string, job: Lease, options: SettleOptions = {}): Promise<Job> {
    return this.settle(queue, job, "fail", options);
  }

  dead(queue: string, job: Lease, options: SettleOptions = {}): Promise<Job> {
    return this.settle(queue, job, "dead", options);
  }

  /** Extends a lease (by `extend`, default the lease's length). */
  heartbeat(queue: string, job: Lease, options: { extend?: Duration } = {}): Promise<Job> {
    return this.transport.request("POST", `${this.job(queue, job.id)}/heartbeat`, {
      body: { lease_token: tokenOf(job), extend: options.extend },
    });
  }

  /** Moves a dead job back to ready. */
  requeue(queue: string, id: string): Promise<Job> {
    return this.transport.request("POST", `${this.job(queue, id)}/requeue`, { body: {} });
  }

  /** Deletes done or dead jobs (older than `olderThan`). */
  purge(
    queue: string,
    status: "done" | "dead",
    options: { olderThan?: Duration } = {},
  ): Promise<OperationResult<"queue.purge">> {
    return this.transport.request("POST", `${this.q(queue)}/purge`, {
      body: { status, older_than: options.olderThan },
    });
  }

  get(queue: string, id: string): Promise<Job> {
    return this.transport.request("GET", this.job(queue, id));
  }

  /** A page of jobs in send order (of one `status`). */
  messages(queue: string, options: PageOptions & { status?: JobStatus } = {}): Promise<Page<Job>> {
    return this.transport.request("GET", `${this.q(queue)}/messages`, { query: { ...options } });
  }

  iterateMessages(queue: string, options: { status?: JobStatus; limit?: number } = {}): AsyncGenerator<Job> {
    return everyItem((cursor) => this.messages(queue, { ...options, cursor }));
  }

  /** Subscribes `queue` to `topic` (again: the existing subscription). */
  subscribe(topic: string, queue: string): Promise<Subscription> {
    return this.transport.request("POST", `${this.base}/topics/${seg(topic)}/subscriptions`, { body: { queue } });
  }

  async unsubscribe(topic: string, queue: string): Promise<void> {
    await this.transport.request("DELETE", `${this.base}/topics/${seg(topic)}/subscriptions/${seg(queue)}`);
  }

  /** One job in each subscribed queue. */
  publish(topic: string, body: unknown): Promise<OperationResult<"queue.publish">> {
    return this.transport.request("POST", `${this.base}/topics/${seg(topic)}/publish`, { body: { body } });
  }

  /** Publishes up to 100 bodies in one transaction; each entry answers `{ delivered }` or its error. */
  async publishBatch(
    topic: string,
    bodies: readonly unknown[],
  ): Promise<OperationResult<"queue.publish_batch">["data"]> {
    const answer = await this.transport.request<OperationResult<"queue.publish_batch">>(
      "POST",
      `${this.base}/topics/${seg(topic)}/publish/batch`,
      { body: { messages: bodies.map((body) => ({ body })) } },
    );
    return answer.data;
  }
}
