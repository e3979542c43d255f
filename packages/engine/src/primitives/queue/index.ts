import { logOf } from "../changes/log.js";
import type { PrimitiveDefinition } from "../definition.js";
import type { AnyOperation } from "../operation.js";
import { QUEUE_BATCH_OPERATIONS } from "./batch.js";
import type { QueueHandle } from "./handle.js";
import { QueueInbox } from "./inbox.js";
import { SINGLE_OPERATIONS } from "./ops.js";
import { QueueStore } from "./store.js";
import { Waiters } from "./waiters.js";

export const queueDefinition: PrimitiveDefinition<QueueHandle> = {
  type: "queue",
  open: (db, env) => {
    const store = new QueueStore(db, env.clock, logOf(env));
    return { store, waiters: new Waiters(store), inbox: new QueueInbox(db, store) };
  },
  close: (handle) => handle.waiters.close(),
  // Leases that ran out on a job's last attempt make it dead: a feed reader sees it now.
  beforeChangesRead: (handle) => handle.store.reap(),
  // The copy's leased jobs are ready again: nobody holds their leases there.
  onFork: (handle) => handle.store.releaseLeases(),
  // Pending jobs: ready or leased.
  items: (handle) => handle.store.pendingCount(),
};

export type { QueueHandle } from "./handle.js";
export {
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  MAX_BATCH,
  MAX_BODY_BYTES,
  MAX_LEASE_MS,
  MAX_RECEIVE,
  MAX_WAIT_MS,
} from "./limits.js";

export const QUEUE_OPERATIONS: readonly AnyOperation[] = [...SINGLE_OPERATIONS, ...QUEUE_BATCH_OPERATIONS];
export type { Job, JobStatus, QueueCounts } from "./store.js";
