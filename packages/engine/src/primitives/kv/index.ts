import { logOf } from "../changes/log.js";
import type { PrimitiveDefinition } from "../definition.js";
import { KvStore } from "./store.js";

export const kvDefinition: PrimitiveDefinition<KvStore> = {
  type: "kv",
  open: (db, env) => new KvStore(db, env.clock, logOf(env)),
  beforeChangesRead: (store) => store.expireDue(),
  // Unexpired keys.
  items: (store) => store.count(),
};

export { MAX_KEY_BYTES, MAX_KEYS_PER_CALL, MAX_MSET_ITEMS, MAX_VALUE_BYTES } from "./limits.js";
export { KV_OPERATIONS } from "./ops.js";
export { KvStore } from "./store.js";
