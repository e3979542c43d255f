import {
  type DueDelivery,
  disableWebhook,
  dueDeliveries,
  GIVE_UP_MS,
  type HeldEndpoint,
  holdEndpoints,
  openWebhookSecret,
  recordAttempt,
  recordDeliveries,
  releaseEndpoint,
  renewEndpoint,
  type WebhookFilter,
  webhookId,
} from "@prim/db";
import { guardedPost, randomToken, ServiceError } from "@prim/engine";
import { webhookHeaders } from "@prim/wire";
import type pg from "pg";
import type { ChangeFeed, FeedChange } from "./feed.js";

/**
 * Sends webhooks (issue 42, item 3): every tick, this process takes the endpoints no other
 * process holds (a lease in Postgres), reads each one's change feed after its cursor into
 * deliveries, and sends them in order — signed (Standard Webhooks; `webhook-id` the change's
 * id, the same on every retry), through the vault's outbound guard (public addresses only,
 * redirects not followed), retried with backoff for 24 hours. An endpoint failing for 24 hours
 * is disabled and its workspace's owners are mailed.
 */

export interface DispatcherOptions {
  masterKey: Buffer;
  /** This cell's id: it serves the endpoints of the workspaces placed on it, from its own engines. */
  cell: string;
  /** ms between ticks (default 250). */
  intervalMs?: number;
  now?: () => number;
  /** Tests only: loopback receivers (production: public addresses only). */
  allowLoopback?: boolean;
  /** Tells a workspace's owners that an endpoint was disabled. */
  mail?: (to: string, subject: string, text: string) => Promise<void>;
  /** Counts each delivery sent as one operation of its workspace. */
  count?: (workspace: string) => void;
  log?: (line: string) => void;
}

/** Endpoints one tick serves; changes one read takes; deliveries one endpoint sends per tick. */
const ENDPOINTS_PER_TICK = 20;
const CHANGES_PER_READ = 100;
const SENDS_PER_TICK = 100;
/**
 * An endpoint's lease, renewed before each send and each feed read, so a live process keeps it
 * while a process killed mid-tick holds it up for at most this long. Longer than a send may take.
 */
const LEASE_MS = 15_000;
const SEND_TIMEOUT_MS = 10_000;
/** A receiver's answer is read and dropped; past this it counts as a failure (the guard never truncates). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** Whether a change passes an endpoint's filter. */
export function passes(filter: WebhookFilter | null, change: FeedChange): boolean {
  if (filter === null) return true;
  if (filter.types !== undefined && !filter.types.includes(change.primitive.type)) return false;
  if (filter.ops !== undefined && !filter.ops.includes(change.change.op)) return false;
  if (filter.prefix !== undefined) {
    const subject = change.change.key ?? change.change.path ?? change.change.id ?? change.change.table;
    if (typeof subject !== "string" || !subject.startsWith(filter.prefix)) return false;
  }
  return true;
}

/** A delivery's body: the Standard Webhooks payload shape `{ type, timestamp, data }`. */
export const bodyOf = (change: FeedChange) =>
  JSON.stringify({
    type: "prim.change",
    timestamp: new Date(change.change.ts).toISOString(),
    data: { group: change.group, primitive: change.primitive, change: change.change },
  });

/** The oldest cursor a 409 `conflict` of the feed names, or null for any other error. */
function heldCursor(error: unknown): string | null {
  if (!(error instanceof ServiceError) || error.code !== "conflict") return null;
  return /the oldest cursor still held is '([^']+)'/.exec(error.message)?.[1] ?? null;
}

/** The delivery that tells a receiver changes were skipped (`prim.gap`), in the stream's order. */
const gapBody = (error: Error, now: number) =>
  JSON.stringify({
    type: "prim.gap",
    timestamp: new Date(now).toISOString(),
    data: { reason: error.message.replace(/; the oldest cursor still held is '[^']+'/, "") },
  });

/** An endpoint this process holds, and until when (as far as this process last set it). */
interface Lease {
  endpoint: HeldEndpoint;
  until: number;
}

export class WebhookDispatcher {
  private readonly holder = `dispatcher:${randomToken(9)}`;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly feed: ChangeFeed,
    private readonly options: DispatcherOptions,
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((error: unknown) => this.options.log?.(`webhooks: a tick failed: ${String(error)}`))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(loop, this.options.intervalMs ?? 250);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running;
  }

  /** One round: every endpoint this process could take, served at once. */
  async tick(): Promise<void> {
    const at = this.now();
    const held = await holdEndpoints(this.pool, {
      holder: this.holder,
      cell: this.options.cell,
      now: at,
      leaseMs: LEASE_MS,
      limit: ENDPOINTS_PER_TICK,
    });
    await Promise.all(held.map((endpoint) => this.serve({ endpoint, until: at + LEASE_MS })));
  }

  private async serve(lease: Lease): Promise<void> {
    const { endpoint } = lease;
    try {
      if (await this.pull(lease)) await this.push(lease);
    } catch (error) {
      this.options.log?.(`webhooks: ${endpoint.id}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      await releaseEndpoint(this.pool, endpoint.id, this.holder).catch(() => {});
    }
  }

  /** The feed after the cursor into deliveries; false when another process took the endpoint over. */
  private async pull(lease: Lease): Promise<boolean> {
    const { endpoint } = lease;
    let cursor = endpoint.cursor;
    for (;;) {
      if (!(await this.renew(lease))) return false;
      let page: Awaited<ReturnType<ChangeFeed["read"]>>;
      try {
        page = await this.feed.read(
          endpoint.workspace_id,
          { groupId: endpoint.group_id, primitiveId: endpoint.primitive_id },
          cursor,
          CHANGES_PER_READ,
        );
      } catch (error) {
        const held = heldCursor(error);
        if (held === null) throw error;
        // The log moved on without us (a restore, or changes past the retention window while
        // the endpoint was disabled): resume at the oldest change held, and say so in order.
        const gap = { messageId: `gap.${endpoint.id}.${held.slice(-16)}`, body: gapBody(error as Error, this.now()) };
        if (!(await recordDeliveries(this.pool, endpoint, this.holder, cursor, held, [gap], this.now()))) return false;
        cursor = held;
        continue;
      }
      if (page.cursor === cursor) return true;
      const messages = page.changes
        .filter((change) => passes(endpoint.filter, change))
        .map((change) => ({ messageId: change.messageId, body: bodyOf(change) }));
      const recorded = await recordDeliveries(
        this.pool,
        endpoint,
        this.holder,
        cursor,
        page.cursor,
        messages,
        this.now(),
      );
      if (!recorded) return false;
      cursor = page.cursor;
      if (page.changes.length < CHANGES_PER_READ) return true;
    }
  }

  /** The due deliveries in order, until one fails (it holds the rest back until its retry). */
  private async push(lease: Lease): Promise<void> {
    const { endpoint } = lease;
    const due = await dueDeliveries(this.pool, endpoint.id, this.now(), SENDS_PER_TICK);
    if (due.length === 0) return;
    const secret = openWebhookSecret(this.options.masterKey, endpoint.id, endpoint.secret);
    for (const delivery of due) {
      if (!(await this.renew(lease))) return;
      const attempt = await this.send(endpoint, secret, delivery);
      const { failingFor } = await recordAttempt(this.pool, endpoint.id, delivery, attempt, this.now());
      if (attempt.ok) continue;
      if (failingFor >= GIVE_UP_MS) await this.disable(endpoint, attempt);
      return;
    }
  }

  /**
   * Keeps the endpoint's lease long enough for one more send (renewed for LEASE_MS once less than
   * a send's timeout and a margin is left); false when another process took it over.
   */
  private async renew(lease: Lease): Promise<boolean> {
    const now = this.now();
    if (lease.until - now > SEND_TIMEOUT_MS + 2_000) return true;
    lease.until = now + LEASE_MS;
    return renewEndpoint(this.pool, lease.endpoint.id, this.holder, lease.until);
  }

  private async send(endpoint: HeldEndpoint, secret: string, delivery: DueDelivery) {
    const headers = await webhookHeaders(secret, webhookId(delivery.message_id), delivery.body, this.now());
    this.options.count?.(endpoint.workspace_id);
    try {
      const res = await guardedPost(new URL(endpoint.url), Buffer.from(delivery.body), {
        timeoutMs: SEND_TIMEOUT_MS,
        maxBytes: MAX_RESPONSE_BYTES,
        headers: { ...headers, "content-type": "application/json", "user-agent": "Prim-Webhooks/1" },
        allowLoopback: this.options.allowLoopback,
      });
      const ok = res.status >= 200 && res.status < 300;
      return { ok, status: res.status, error: ok ? null : `the endpoint answered ${res.status}` };
    } catch (error) {
      // The guard's refusals and the network's failures, never their internals.
      const message = error instanceof ServiceError ? error.message : "the request failed";
      return { ok: false, status: null, error: message };
    }
  }

  private async disable(endpoint: HeldEndpoint, attempt: { status: number | null; error: string | null }) {
    const reason = `every delivery failed for 24 hours (last: ${attempt.error ?? attempt.status})`;
    const owners = await disableWebhook(this.pool, endpoint.id, reason, this.now());
    for (const owner of owners) {
      await this.options
        .mail?.(
          owner,
          `Prim: webhook ${endpoint.id} was disabled`,
          `The webhook endpoint ${endpoint.url} (${endpoint.id}) failed every delivery for 24 hours and was disabled.\n` +
            `Last failure: ${attempt.error ?? attempt.status}\n\n` +
            "Its deliveries are kept; enable it again (POST /v1/webhooks/{id}/enable or the dashboard) once it answers.",
        )
        .catch(() => {});
    }
  }
}
