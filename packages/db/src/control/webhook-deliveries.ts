import { notFound, prefixedId } from "@prim/engine";
import type { WebhookDelivery } from "@prim/wire";
import type pg from "pg";
import { inTransaction } from "../connect.js";
import type { WebhookFilter } from "./webhooks.js";
import { auditedTransaction } from "./workspace-audit.js";

/**
 * The dispatcher's side of webhooks (apps/api `webhooks/dispatcher.ts`): an endpoint is held by
 * one process at a time (a lease in its row), which reads the change feed after the endpoint's
 * cursor into deliveries (the rows and the cursor's advance in one transaction: at least once,
 * never a gap) and sends its pending deliveries in order. A failed attempt is retried with
 * backoff for 24 hours; an endpoint that has failed for 24 hours is disabled.
 */

/** Retries of one delivery, after each failed attempt (then every 8 hours until its 24 hours are up). */
export const RETRY_DELAYS_MS = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
];
/** How long a delivery is retried, and an endpoint may fail before it is disabled. */
export const GIVE_UP_MS = 24 * 3_600_000;

export interface HeldEndpoint {
  id: string;
  workspace_id: string;
  group_id: string | null;
  primitive_id: string | null;
  url: string;
  secret: { iv: string; tag: string; ciphertext: string };
  filter: WebhookFilter | null;
  cursor: string | null;
  failing_since: Date | null;
}

/**
 * Takes up to `limit` enabled endpoints of the workspaces placed on `cell` that no other process
 * holds, for `leaseMs` (the cell reads their feeds from its own engines).
 */
export async function holdEndpoints(
  pool: pg.Pool,
  input: { holder: string; cell: string; now: number; leaseMs: number; limit: number },
): Promise<HeldEndpoint[]> {
  const { rows } = await pool.query<HeldEndpoint>(
    `UPDATE webhook_endpoints e SET lease_holder = $1, lease_until = $3
      WHERE e.id IN (SELECT w.id FROM webhook_endpoints w
                       JOIN placements p ON p.workspace_id = w.workspace_id AND p.cell_id = $5
                      WHERE w.disabled_at IS NULL AND (w.lease_until IS NULL OR w.lease_until < $2)
                      ORDER BY w.lease_until NULLS FIRST LIMIT $4 FOR UPDATE OF w SKIP LOCKED)
      RETURNING e.id, e.workspace_id, e.group_id, e.primitive_id, e.url, e.secret, e.filter, e.cursor, e.failing_since`,
    [input.holder, new Date(input.now), new Date(input.now + input.leaseMs), input.limit, input.cell],
  );
  return rows;
}

/**
 * Extends `holder`'s lease on an endpoint to `until`; false when the lease was lost (it lapsed
 * and another process took the endpoint, or the endpoint was disabled or deleted).
 */
export async function renewEndpoint(pool: pg.Pool, id: string, holder: string, until: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE webhook_endpoints SET lease_until = $3
      WHERE id = $1 AND lease_holder = $2 AND lease_until IS NOT NULL AND disabled_at IS NULL`,
    [id, holder, new Date(until)],
  );
  return rowCount === 1;
}

/** Gives an endpoint up (the next tick of any process may take it). */
export async function releaseEndpoint(pool: pg.Pool, id: string, holder: string): Promise<void> {
  await pool.query("UPDATE webhook_endpoints SET lease_until = NULL WHERE id = $1 AND lease_holder = $2", [id, holder]);
}

/**
 * The changes read after the endpoint's cursor, as deliveries, with the cursor's advance: in one
 * transaction, and only while `holder` still holds it and the cursor is still `from` (else
 * nothing: another process took over). A change read again after a crash is the same row.
 */
export async function recordDeliveries(
  pool: pg.Pool,
  endpoint: { id: string; workspace_id: string },
  holder: string,
  from: string | null,
  to: string | null,
  messages: { messageId: string; body: string }[],
  now: number,
): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const moved = await client.query(
      `UPDATE webhook_endpoints SET cursor = $4
        WHERE id = $1 AND lease_holder = $2 AND cursor IS NOT DISTINCT FROM $3`,
      [endpoint.id, holder, from, to],
    );
    if (moved.rowCount !== 1) return false;
    for (const message of messages) {
      await client.query(
        `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, message_id, body, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (endpoint_id, message_id) DO NOTHING`,
        [prefixedId("whd", now), endpoint.id, endpoint.workspace_id, message.messageId, message.body, new Date(now)],
      );
    }
    return true;
  });
}

/** The `webhook-id` a delivery is sent with: a redelivery's row carries `#<its id>` after it. */
export const webhookId = (messageId: string) => messageId.split("#")[0] as string;

export interface DueDelivery {
  id: string;
  message_id: string;
  body: string;
  attempts: number;
  created_at: Date;
}

/** The endpoint's pending deliveries, oldest first, up to the first one not yet due. */
export async function dueDeliveries(
  pool: pg.Pool,
  endpointId: string,
  now: number,
  limit: number,
): Promise<DueDelivery[]> {
  const { rows } = await pool.query<DueDelivery & { next_attempt_at: Date }>(
    `SELECT id, message_id, body, attempts, created_at, next_attempt_at FROM webhook_deliveries
      WHERE endpoint_id = $1 AND status = 'pending' ORDER BY id LIMIT $2`,
    [endpointId, limit],
  );
  const due: DueDelivery[] = [];
  // In order: a delivery waiting for its retry holds back the ones after it.
  for (const row of rows) {
    if (row.next_attempt_at.getTime() > now) break;
    due.push(row);
  }
  return due;
}

export interface Attempt {
  status: number | null;
  error: string | null;
  ok: boolean;
}

/**
 * One attempt's outcome. A failure schedules the next attempt, or fails the delivery once its 24
 * hours are up; the endpoint's `failing_since` starts at its first failure and clears on a
 * success. Answers whether the endpoint has now failed for 24 hours (the caller disables it).
 */
export async function recordAttempt(
  pool: pg.Pool,
  endpointId: string,
  delivery: DueDelivery,
  attempt: Attempt,
  now: number,
): Promise<{ failingFor: number }> {
  return inTransaction(pool, async (client) => {
    const at = new Date(now);
    // The endpoint's row first, then its delivery's: the order a delete takes them in (the
    // endpoint, then its deliveries by cascade). The other order deadlocked a DELETE racing an
    // attempt's outcome, and Postgres aborted the DELETE (500).
    const endpoint = await client.query("SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE", [
      endpointId,
    ]);
    if (endpoint.rowCount === 0) return { failingFor: 0 }; // deleted meanwhile: nothing to record
    if (attempt.ok) {
      await client.query(
        `UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_attempt_at = $2,
                last_status = $3, last_error = NULL, delivered_at = $2 WHERE id = $1`,
        [delivery.id, at, attempt.status],
      );
      await client.query("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1", [endpointId]);
      return { failingFor: 0 };
    }
    const expired = now - delivery.created_at.getTime() >= GIVE_UP_MS;
    const delay = RETRY_DELAYS_MS[Math.min(delivery.attempts, RETRY_DELAYS_MS.length - 1)] as number;
    await client.query(
      `UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, last_attempt_at = $3, next_attempt_at = $4,
              last_status = $5, last_error = $6 WHERE id = $1`,
      [delivery.id, expired ? "failed" : "pending", at, new Date(now + delay), attempt.status, attempt.error],
    );
    const { rows } = await client.query<{ failing_since: Date }>(
      "UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $2) WHERE id = $1 RETURNING failing_since",
      [endpointId, at],
    );
    return { failingFor: now - (rows[0]?.failing_since.getTime() ?? now) };
  });
}

/** Disables an endpoint (audited `webhook.disable`); answers its workspace's owners' addresses to tell. */
export async function disableWebhook(
  pool: pg.Pool,
  endpointId: string,
  reason: string,
  now: number,
): Promise<string[]> {
  return auditedTransaction(
    pool,
    async (client, record) => {
      const { rows } = await client.query<{ workspace_id: string }>(
        `UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3, lease_until = NULL
          WHERE id = $1 AND disabled_at IS NULL RETURNING workspace_id`,
        [endpointId, new Date(now), reason],
      );
      const ws = rows[0]?.workspace_id;
      if (ws === undefined) return [];
      await record(ws, { actor: "webhooks", action: "webhook.disable", target: endpointId, detail: { reason } });
      const owners = await client.query<{ email: string }>(
        `SELECT u.email FROM members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND m.role = 'owner'`,
        [ws],
      );
      return owners.rows.map((row) => row.email);
    },
    () => now,
  );
}

/** One delivery of the log (`@prim/wire`'s `WebhookDelivery`). */
export type DeliveryInfo = WebhookDelivery;

/** An endpoint's deliveries, newest first, `before` a delivery id (paging); another workspace's endpoint: 404. */
export async function listDeliveries(
  pool: pg.Pool,
  workspace: string,
  endpointId: string,
  options: { limit: number; before?: string },
): Promise<DeliveryInfo[]> {
  const owner = await pool.query("SELECT 1 FROM webhook_endpoints WHERE id = $1 AND workspace_id = $2", [
    endpointId,
    workspace,
  ]);
  if (owner.rowCount !== 1) throw notFound(`webhook '${endpointId.slice(0, 64)}'`);
  const { rows } = await pool.query<{
    id: string;
    message_id: string;
    status: DeliveryInfo["status"];
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    created_at: Date;
    last_attempt_at: Date | null;
    next_attempt_at: Date;
    delivered_at: Date | null;
  }>(
    `SELECT id, message_id, status, attempts, last_status, last_error, created_at, last_attempt_at, next_attempt_at,
            delivered_at
       FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [endpointId, options.before ?? null, options.limit],
  );
  return rows.map((row) => ({
    ...row,
    created_at: row.created_at.getTime(),
    last_attempt_at: row.last_attempt_at?.getTime() ?? null,
    next_attempt_at: row.status === "pending" ? row.next_attempt_at.getTime() : null,
    delivered_at: row.delivered_at?.getTime() ?? null,
  }));
}

/** Sends a delivery again (delivered or failed): the same `webhook-id`, the body as first signed. */
export async function redeliver(
  pool: pg.Pool,
  workspace: string,
  endpointId: string,
  deliveryId: string,
  actor: string,
  now: number,
): Promise<void> {
  await auditedTransaction(pool, async (client, record) => {
    // A new row, last in the endpoint's order (same webhook-id), so the log keeps the first's story.
    const { rows } = await client.query<{ message_id: string; body: string }>(
      `SELECT d.message_id, d.body FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = $1 AND d.endpoint_id = $2 AND e.workspace_id = $3`,
      [deliveryId, endpointId, workspace],
    );
    const row = rows[0];
    if (row === undefined) throw notFound(`delivery '${deliveryId.slice(0, 64)}'`);
    const id = prefixedId("whd", now);
    await client.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, workspace_id, message_id, body, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)`,
      [id, endpointId, workspace, `${webhookId(row.message_id)}#${id}`, row.body, new Date(now)],
    );
    await record(workspace, {
      actor,
      action: "webhook.redeliver",
      target: endpointId,
      detail: { delivery: deliveryId },
    });
  });
}
