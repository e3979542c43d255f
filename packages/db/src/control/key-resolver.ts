import type { Principal } from "@prim/engine";
import { credentialTag, isAttenuatedToken, workspaceTag } from "@prim/wire";
import type pg from "pg";
import { hashKey, looksLikeApiKey } from "./api-key.js";
import { AttenuatedTokens } from "./attenuated-tokens.js";
import { admitKey, invalidToken, type KeyAdmission, keyAdmission } from "./key-limits.js";
import { KEY_ROW_COLUMNS, type KeyRow, principalOf } from "./key-row.js";

interface Cached extends KeyAdmission {
  principal: Principal;
  at: number;
}

/** What the edge knows of the request besides its credential. */
export interface ResolveContext {
  /** The trusted client address (packages/http `clientIpOf`): a key with `ip_allow` needs it. */
  clientIp?: string;
}

/** The cached key's principal, once its expiry and allowlist admit this request (`admitKey`). */
function admitted(entry: Cached, now: number, context: ResolveContext): Principal {
  admitKey(entry, now, context.clientIp);
  return entry.principal;
}

/** Whether the workspace tag `token` carries, if any, is `workspace`'s (@prim/wire workspace-tag.ts). */
export function tagAgrees(token: string, workspace: string): boolean {
  const tag = credentialTag(token);
  return tag === null || tag === workspaceTag(workspace);
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
    this.attenuated = new AttenuatedTokens(pool, principalOf, { ...options, now: () => this.now() });
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /**
   * The principal of `Authorization: Bearer <token>` (a `pk_` key or a `pa_` attenuated token),
   * or 401 `invalid_token` (unknown, revoked or expired), or 403 `forbidden` (a client address
   * outside the key's `ip_allow` or a token's `ip` caveat).
   */
  async resolve(token: string | undefined, context: ResolveContext = {}): Promise<Principal> {
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
      const principal = admitted(cached, now, context);
      this.touch(hash, principal, now);
      return principal;
    }
    const { rows } = await this.pool.query<KeyRow>(
      `SELECT ${KEY_ROW_COLUMNS}
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
        WHERE k.hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    // A tag is a routing hint, never a credential: one that names another workspace than the
    // key's own (a forged tag on a real secret) is refused as if the key did not exist.
    if (row === undefined || !tagAgrees(token, row.workspace_id)) {
      this.cache.delete(hash);
      throw invalidToken();
    }
    const principal = principalOf(row);
    const entry: Cached = { principal, at: now, ...keyAdmission(row) };
    if (this.cache.size >= (this.options.maxEntries ?? 10_000)) this.cache.clear();
    this.cache.set(hash, entry);
    const admittedPrincipal = admitted(entry, now, context);
    this.touch(hash, admittedPrincipal, now);
    return admittedPrincipal;
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
