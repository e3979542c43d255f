import { logOf } from "../changes/log.js";
import type { PrimitiveDefinition } from "../definition.js";
import { StorageStore } from "./store.js";

export const storageDefinition: PrimitiveDefinition<StorageStore> = {
  type: "storage",
  open: (db, env) => new StorageStore(db, env.clock, logOf(env)),
  items: (store) => store.count(),
  externalBytes: (store) => store.blobBytes(),
  blobRefs: (store) => store.blobRefs(),
  // Moving a store invalidates its signed URLs, even if it later moves back.
  onMove: (store) => {
    store.revokeSigned();
  },
  // A restore brings back the snapshot's epoch and use counts: URLs revoked since, or used up,
  // would work again. Every URL signed before the restore stops instead.
  beforeRestore: (store) => store.signEpoch(),
  onRestore: (store, before) => {
    store.revokeSignedAfterRestore(before as number);
  },
  // A copy's signed URLs start a fresh epoch (they also name the copy's own id).
  onFork: (store) => {
    store.revokeSigned();
  },
};

export {
  INLINE_OBJECT_BYTES,
  MAX_METADATA_BYTES,
  MAX_OBJECT_BYTES,
  MAX_OBJECT_KEY_BYTES,
  MAX_PRESIGN_MS,
  MAX_SIGNED_USES,
} from "./limits.js";
export { type PresignResult, STORAGE_OPERATIONS } from "./ops.js";
export { SIGNED_URL_PRINCIPAL } from "./signed-ops.js";
export type { StorageStore } from "./store.js";
