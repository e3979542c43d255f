import { type Principal, ServiceError } from "@prim/engine";
import {
  type KeyMintRequest,
  type KeyRevoked,
  type KeyToolName,
  type MintedKey,
  type MintedKeyInfo,
  toolAllowed,
} from "@prim/wire";
import type pg from "pg";
import type { KeyBudgets } from "./key-budgets.js";
import type { ApiKeyResolver } from "./key-resolver.js";
import { listMintedKeys, mintKey, revokeMintedKey } from "./key-tree.js";
import type { Revocations } from "./revocation.js";

/**
 * Minted keys as an edge serves them (issue 41, item 2): the checks and steps REST
 * (`POST/GET/DELETE /v1/keys`, apps/api) and MCP (`key_mint`, `key_list`, `key_revoke`, apps/mcp)
 * share, so both answer alike: who may manage keys (`keyCaller`), the edge's rate limit, then
 * `key-tree.ts`; a revocation forgets the key in this process at once and tells every other.
 */

/** How far a call goes: listing reads; minting and revoking write. */
export type KeyAccess = "read" | "write";

/**
 * The calling key's id, or 403 `forbidden`. Only a `pk_` key has one (actor `key:<id>`): an OAuth
 * token (`oauth:<connection>`) manages no keys. A `pa_` token (a key narrowed offline) resolves
 * to its key's actor, but its caveats live in the token, not in the key's row that minting
 * narrows from: a child minted through it could drop them (a one-hour token minting a key that
 * never expires); mint from the key itself. A read-only credential may list, but neither mint nor
 * revoke: read-only means the credential changes nothing, keys included (so no read-only key
 * has children; `narrowReadOnly` still refuses a writable child of one).
 */
export function keyCaller(principal: Principal, access: KeyAccess): string {
  if (!principal.actor.startsWith("key:")) {
    throw new ServiceError("forbidden", "only an API key can manage minted keys");
  }
  if (principal.attenuated === true) {
    throw new ServiceError(
      "forbidden",
      "an attenuated (pa_) token cannot manage minted keys: its caveats would not bind the child; use the key itself",
    );
  }
  if (access === "write" && principal.readOnly === true) {
    throw new ServiceError(
      "forbidden",
      "this credential is read-only: it may list minted keys, not mint or revoke them",
    );
  }
  return principal.actor.slice("key:".length);
}

/** One key-management call: who, and the edge's rate limit (run once the caller is accepted). */
export interface KeyCall {
  principal: Principal;
  /** Takes a token from the calling key's bucket (the limiter, as `KEY_MANAGEMENT_RATE_AS`); throws to refuse. */
  admit?: () => Promise<unknown>;
}

const KEY_ID_RE = /^key_[0-9a-z]{26}$/;

export class KeyManagement {
  constructor(
    private readonly deps: {
      pool: pg.Pool;
      revocations: Revocations;
      resolver: ApiKeyResolver;
      /** A child's budget carved out of its parent's (the limits' Redis). */
      budgets?: KeyBudgets;
    },
  ) {}

  private async accept(call: KeyCall, access: KeyAccess, tool: KeyToolName): Promise<string> {
    const caller = keyCaller(call.principal, access);
    // The key's tool allowlist holds on every edge: a key for `kv_*` manages no keys over REST
    // either (MCP never lists the tool to it), so a narrowed sub-agent cannot mint its own.
    if (!toolAllowed(call.principal, tool)) {
      throw new ServiceError("tool_not_allowed", `this credential's tool allowlist does not include ${tool}`);
    }
    await call.admit?.();
    return caller;
  }

  /** `POST /v1/keys`, `key_mint`: a child of the calling key (the request already validated). */
  async mint(call: KeyCall, body: KeyMintRequest): Promise<MintedKey> {
    const caller = await this.accept(call, "write", "key_mint");
    return mintKey(
      this.deps.pool,
      {
        parent: caller,
        workspace: call.principal.workspace,
        name: body.name,
        group: body.group,
        tools: body.tools,
        readOnly: body.read_only,
        expiresAt: body.expires_at,
        ipAllow: body.ip_allow,
        budget: body.budget,
      },
      this.deps.budgets,
    );
  }

  /** `GET /v1/keys`, `key_list`: the caller's subtree. */
  async list(call: KeyCall): Promise<MintedKeyInfo[]> {
    return listMintedKeys(this.deps.pool, await this.accept(call, "read", "key_list"));
  }

  /** `DELETE /v1/keys/{id}`, `key_revoke`: `id` and its subtree, in every process before this answers. */
  async revoke(call: KeyCall, id: string): Promise<KeyRevoked> {
    const caller = await this.accept(call, "write", "key_revoke");
    if (!KEY_ID_RE.test(id)) throw new ServiceError("not_found", `key '${id.slice(0, 64)}'`);
    return revokeMintedKey(
      this.deps.pool,
      { caller, workspace: call.principal.workspace, id },
      this.publish,
      this.deps.budgets,
    );
  }

  // Dropped here at once, then every other process is told (the fan-out reaches this one too, later).
  private readonly publish = async (hash: string): Promise<void> => {
    this.deps.resolver.forget(hash);
    await this.deps.revocations.publish(hash);
  };
}
