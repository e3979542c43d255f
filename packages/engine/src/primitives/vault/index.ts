import { ServiceError } from "@prim/wire";
import { logOf } from "../changes/log.js";
import type { PrimitiveDefinition, PrimitiveEnv } from "../definition.js";
import type { VaultHandle } from "./handle.js";
import { SecretRequests } from "./requests.js";
import { VaultStore } from "./store.js";
import { openFromArchive, sealForArchive } from "./transfer.js";

export const vaultDefinition: PrimitiveDefinition<VaultHandle> = {
  type: "vault",
  open: (db, env) => {
    // Without a key ring there is nowhere to keep keys: refuse rather than store anything.
    if (env.vault === undefined) throw new ServiceError("internal_error", "this engine has no vault key ring");
    return {
      store: new VaultStore(db, env.clock, env.vault.keyRing, logOf(env)),
      requests: new SecretRequests(db, env.clock),
      allowLoopbackFetch: env.vault.allowLoopbackFetch,
    };
  },
  // Calls waiting for a human's answer get the request as it stands.
  close: (vault) => vault.requests.close(),
  // Secrets (grants are not counted).
  items: (vault) => vault.store.count(),
  // Every value is re-sealed under the new group's key before the move answers.
  onMove: (vault, move) => vault.store.moved(move.toGroupId),
  // A fork into another group is re-sealed under that group's key now; the copy's values are
  // re-bound to its own id on its first operation (`bind`).
  onFork: (vault, fork) => vault.store.moved(fork.toGroupId),
  // Group archives carry values sealed under the archive key, never a group's data key.
  toArchive: (path, env, archiveKey) => sealForArchive(path, keyRingOf(env), archiveKey),
  fromArchive: (path, env, archiveKey, target) => openFromArchive(path, keyRingOf(env), archiveKey, target),
};

function keyRingOf(env: PrimitiveEnv) {
  if (env.vault === undefined) throw new ServiceError("internal_error", "this engine has no vault key ring");
  return env.vault.keyRing;
}

export { type KeyRing, LocalKeyRing, type VaultEnv } from "../../keys/keyring.js";
export type { FetchResult } from "./fetch-op.js";
export type { VaultHandle } from "./handle.js";
export {
  DEFAULT_FETCH_TIMEOUT_MS,
  MAX_FETCH_TIMEOUT_MS,
  MAX_GRANT_HOSTS,
  MAX_REDIRECTS,
  MAX_REQUEST_BODY_BYTES,
  MAX_RESPONSE_BYTES,
  MAX_SECRET_BYTES,
  SECRET_NAME_RE,
} from "./limits.js";
export { VAULT_OPERATIONS } from "./ops.js";
export {
  MAX_PENDING_REQUESTS,
  MAX_REASON_CHARS,
  SECRET_REQUEST_ID_RE,
  SECRET_REQUEST_TTL_MS,
  type SecretRequest,
} from "./requests.js";
export type { Grant, GrantSummary, SecretInfo, SecretListing } from "./store.js";
