import { type DataContext, dataOp } from "../operation.js";
import type { SecretRequests } from "./requests.js";
import type { VaultStore } from "./store.js";

/** What vault operations get as their store. */
export interface VaultHandle {
  store: VaultStore;
  /** Requests for a human to set a secret (`vault_request_secret`), and the calls waiting on them. */
  requests: SecretRequests;
  /** Test-only engine option: fetch may reach loopback addresses. */
  allowLoopbackFetch: boolean;
}

/** The definer of vault operations (ops.ts, fetch-op.ts): `ctx.store` is a `VaultHandle`. */
export const vaultOp = dataOp<VaultHandle>("vault");

/**
 * The store, sealed for this primitive and its current group: a copied file (fork) or a move
 * that did not finish is re-sealed here, before any value is read or written.
 */
export function boundStore(ctx: DataContext<VaultHandle>): VaultStore {
  const { store } = ctx.store;
  store.bind(ctx.primitive.id, ctx.primitive.group_id);
  return store;
}
