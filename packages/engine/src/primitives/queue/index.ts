import type { PrimitiveDefinition } from "../definition.js";
import type { QueueHandle } from "./handle.js";
import { QueueStore } from "./store.js";
import { Waiters } from "./waiters.js";

export const queueDefinition: PrimitiveDefinition<QueueHandle> = {
  type: "queue",
  open: (db, env) => {
    const store = new QueueStore(db, env.clock);
    return { store, waiters: new Waiters(store) };
  },
  close: (handle) => handle.waiters.close(),
  // The copy's leased jobs are ready again: nobody holds their leases there.
  onFork: (handle) => handle.store.releaseLeases(),
  // Pending jobs: ready or leased.
  items: (handle) => handle.store.pendingCount(),
};

export type { QueueHandle } from "./handle.js";
export {
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  MAX_BODY_BYTES,
  MAX_LEASE_MS,
  MAX_RECEIVE,
  MAX_WAIT_MS,
} from "./limits.js";
export { QUEUE_OPERATIONS } from "./ops.js";
export type { Job, JobStatus, QueueCounts } from "./store.js";
