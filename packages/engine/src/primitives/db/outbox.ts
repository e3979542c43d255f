import { ServiceError, toolAllowed } from "@prim/wire";
import { z } from "zod";
import type { PrimitiveRecord } from "../../catalog/catalog.js";
import { isUlid, prefixedId } from "../../core/ids.js";
import type { OutboxRow } from "../../sql-host/host-outbox.js";
import type { DataContext } from "../operation.js";
import { MAX_BATCH, queueNameSchema } from "../queue/limits.js";
import { sendFields, sendRequest } from "../queue/ops.js";
import { drainOutbox, markOutbox } from "./outbox-drain.js";
import type { DbStore } from "./store.js";

/**
 * `enqueue` on `db.query`, `db.exec` and `db.batch` (engine README, "db outbox"): messages sent
 * into queue primitives of the db's group if and only if the call's transaction commits. Each
 * entry is what a queue send takes, plus the queue primitive (`primitive`, its name or id).
 */
export const enqueueSchema = z
  .array(
    z.strictObject({
      primitive: z.string().min(1, "required").max(128),
      queue: queueNameSchema,
      ...sendFields,
    }),
  )
  .min(1, "at least one message")
  .max(MAX_BATCH, `at most ${MAX_BATCH} messages per call`)
  .optional();

export type EnqueueInput = z.output<typeof enqueueSchema>;

/** Messages a call asks to enqueue, from its input as sent (for access, units, storage). */
export function enqueueCount(input: unknown): number {
  const list = (input as { enqueue?: unknown } | null)?.enqueue;
  return Array.isArray(list) ? Math.min(list.length, MAX_BATCH) : 0;
}

/** The queue primitive an entry names: in the db's group, or 404; another type is 400 `wrong_type`. */
async function queueOf(ctx: DataContext<DbStore>, ref: string, field: string): Promise<PrimitiveRecord> {
  const { catalog } = ctx.services;
  const db = ctx.primitive;
  let record: PrimitiveRecord | undefined;
  if (isUlid(ref)) {
    const found = catalog.cachedPrimitive?.(ref) ?? (await catalog.getPrimitive(ref));
    if (found != null && found.group_id === db.group_id) record = found;
  } else {
    record = (await catalog.primitivesNamed(db.group_id, ref, "queue"))[0];
  }
  if (record === undefined)
    throw new ServiceError("not_found", `${field}: queue primitive '${ref}' in group '${db.group}' not found`);
  if (record.type !== "queue") {
    throw new ServiceError(
      "wrong_type",
      `${field}: enqueue goes into a queue primitive; primitive '${record.name}' is a ${record.type}`,
    );
  }
  if (record.paused) throw new ServiceError("paused", `${field}: primitive '${record.name}' is paused`);
  return record;
}

/**
 * Checks a call's `enqueue` and turns it into outbox rows, before anything runs: only on main;
 * the caller must be allowed to write this db (`db_exec`, not read-only: `readOnly`) and to send
 * to queues (`queue_send` in a scoped credential's allowlist); each queue primitive must be in
 * the db's group (another group's, or an unknown one: 404), not paused (423); each body within
 * the queue's limit (413).
 */
export async function prepareEnqueue(
  ctx: DataContext<DbStore>,
  entries: EnqueueInput,
  branch: string | undefined,
  readOnly: boolean,
): Promise<OutboxRow[] | undefined> {
  if (entries === undefined) return undefined;
  if (branch !== undefined) {
    throw new ServiceError("invalid_request", "enqueue: only a write to main can enqueue, not one to a branch");
  }
  if (readOnly) {
    throw new ServiceError(
      "forbidden",
      "enqueue: sending to a queue is a write; the credential allows only reads (a read-only credential, or db_query without db_exec)",
    );
  }
  if (!toolAllowed(ctx.principal, "queue_send")) {
    throw new ServiceError("tool_not_allowed", "enqueue: this credential's tool allowlist does not include queue_send");
  }
  const now = ctx.services.clock.now();
  const rows: OutboxRow[] = [];
  for (const [i, entry] of entries.entries()) {
    const field = `enqueue[${i}]`;
    const queue = await queueOf(ctx, entry.primitive, `${field}.primitive`);
    const req = sendRequest(entry, `${field}.body`);
    rows.push({
      id: prefixedId("obx"),
      source: ctx.primitive.id,
      queue_id: queue.id,
      queue: entry.queue,
      body: req.body,
      delay_ms: req.delayMs,
      priority: req.priority,
      max_attempts: req.maxAttempts,
      dedupe_key: req.dedupeKey,
      created_at: now,
    });
  }
  return rows;
}

/**
 * Runs a write with `enqueue`: the rows go to the host with the statements (one transaction),
 * then — once that commit is on disk for a durable db, so no job can outlive a write a power cut
 * took back — the outbox is drained before the call is answered: an answered call's jobs are in
 * their queues. A drain that fails leaves them in the outbox for its retry; the write stands.
 */
export async function runWithOutbox<T>(
  ctx: DataContext<DbStore>,
  input: { enqueue?: EnqueueInput; branch?: string | undefined },
  readOnly: boolean,
  run: (outbox: OutboxRow[] | undefined) => Promise<T>,
): Promise<T> {
  const outbox = await prepareEnqueue(ctx, input.enqueue, input.branch, readOnly);
  if (outbox === undefined) return run(undefined);
  await markOutbox(ctx.services.files, ctx.primitive.id);
  const result = await run(outbox);
  ctx.audit.detail = { ...(ctx.audit.detail ?? {}), enqueued: outbox.length };
  await ctx.services.files.synced(ctx.primitive);
  await drainOutbox(ctx.services, ctx.primitive.id, outbox);
  return result;
}
