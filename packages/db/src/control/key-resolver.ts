import { type Principal, ServiceError } from "@prim/engine";
import { isAttenuatedToken } from "@prim/wire";
import type pg from "pg";
import { hashKey, looksLikeApiKey } from "./api-key.js";
import { AttenuatedTokens } from "./attenuated-tokens.js";

/** The key row a credential resolves to (api_keys joined with what a request needs). */
interface KeyRow {
  id: string;
  workspace_id: string;
  group_id: string | null;
  tools: string[] | null;
  read_only: boolean;
  workspace_name: string;
}

interface Cached {
  principal: Principal;
  at: number;
}

/** One answer for every bad credential, so a caller learns nothing from which it was. */
const invalidToken = () =>
  new ServiceError("invalid_token", "the credential is missing, malformed, unknown or revoked", {
    headers: { "WWW-Authenticate": 'Bearer realm="prim"' },
  });

/** A key row's principal, before any attenuation. */
function principalOf(row: KeyRow): Principal {
  return {
    // A key with every group and every tool is a workspace key; anything narrower is scoped.
    kind: row.group_id === null && row.tools === null ? "account" : "scoped",
    workspace: row.workspace_id,
    actor: `key:${row.id}`,
    groupId: row.group_id,
    tools: row.tools,
    workspaceName: row.workspace_name,
    // Read-only is its own property, beside the kind: a read-only key with every group and
    // tool is still the workspace's (it lists and reads every group) but writes nothing.
    ...(row.read_only ? { readOnly: true } : {}),
  };
}

/**
 * `pk_` keys to principals (CLOUD.md, Credentials): sha256 → in-process cache (short TTL) →
 * Postgres. Only the hash is ever looked up. `forget(hash)` drops an entry at once (the
 * revocation fan-out calls it in every process), so a revoked key answers 401 on the next
 * request; the TTL bounds staleness should a message be lost. `last_used_at` is written at most
 * once a minute per key, off the request path.
 */
export class ApiKeyResolver {
  private readonly cache = new Map<string, Cached>();
  private readonly lastUsed = new Map<string, number>();
  /** `pa_` tokens: keys narrowed offline by their holders (attenuated-tokens.ts). */
  private readonly attenuated: AttenuatedTokens;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {
    this.attenuated = new AttenuatedTokens(pool, principalOf, invalidToken, { ...options, now: () => this.now() });
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /**
   * The principal of `Authorization: Bearer <token>` (a `pk_` key or a `pa_` attenuated token),
   * or 401 `invalid_token`. `clientIp` (the trusted client address) is what a token's `ip`
   * caveat is checked against: 403 `forbidden` outside it, or when it is not given.
   */
  async resolve(token: string | undefined, context: { clientIp?: string } = {}): Promise<Principal> {
    if (token !== undefined && isAttenuatedToken(token)) {
      const { principal, rootHash } = await this.attenuated.resolve(token, context.clientIp);
      this.touch(rootHash, principal, this.now());
      return principal;
    }
    if (token === undefined || !looksLikeApiKey(token)) throw invalidToken();
    const hash = hashKey(token);
    const now = this.now();
    const cached = this.cache.get(hash);
    if (cached !== undefined && now - cached.at < (this.options.ttlMs ?? 30_000)) {
      this.touch(hash, cached.principal, now);
      return cached.principal;
    }
    const { rows } = await this.pool.query<KeyRow>(
      `SELECT k.id, k.workspace_id, k.group_id, k.tools, k.read_only, w.name AS workspace_name
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
        WHERE k.hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    if (row === undefined) {
      this.cache.delete(hash);
      throw invalidToken();
    }
    const principal = principalOf(row);
    if (this.cache.size >= (this.options.maxEntries ?? 10_000)) this.cache.clear();
    this.cache.set(hash, { principal, at: now });
    this.touch(hash, principal, now);
    return principal;
  }

  /** Drops a key from the cache (revocation), and every attenuated token made from it. */
  forget(hash: string): void {
    this.cache.delete(hash);
    this.attenuated.forget(hash);
  }

  private touch(hash: string, principal: Principal, now: number): void {
    if (now - (this.lastUsed.get(hash) ?? 0) < 60_000) return;
    this.lastUsed.set(hash, now);
    const id = principal.actor.slice("key:".length);
    void this.pool.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [id]).catch(() => {});
  }
}
