import { type Principal, ServiceError } from "@prim/engine";
import { isAccessTokenShape } from "@prim/wire";
import type pg from "pg";
import { tagAgrees } from "../control/key-resolver.js";
import { hashId } from "./store.js";

/**
 * An OAuth access token as the authorization server issues it: `po_<workspace tag>_` and 43
 * url-safe characters (apps/api oauth/provider.ts), or `po_` and the 43 alone (tokens issued
 * before tags, and grants made before them).
 */
export const looksLikeAccessToken = (token: string) => isAccessTokenShape(token);

interface TokenRow {
  payload: { aud?: string | string[]; exp?: number };
  grant_id: string;
  connection: string;
  workspace_id: string;
  group_id: string;
  tools: string[];
  read_only: boolean;
}

interface Cached {
  principal: Principal;
  grant: string;
  exp: number;
  at: number;
}

const invalidToken = (message: string) => new ServiceError("invalid_token", message);

/**
 * `po_` access tokens to principals for the resource server (CLOUD.md, "OAuth for MCP"): the
 * token's hash finds the stored token and the connection its grant belongs to; the token must be
 * live and issued for this resource (its audience). The principal is a key scoped to the
 * consented group and tools, acting as `oauth:<connection id>`. Cached briefly;
 * `forgetGrant` (the revocation fan-out) drops a grant's tokens at once.
 */
export class OAuthTokenResolver {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly pool: pg.Pool,
    /** The resource every token must be bound to: the MCP URL. */
    private readonly resource: string,
    private readonly options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {}

  async resolve(token: string): Promise<Principal> {
    if (!looksLikeAccessToken(token)) throw invalidToken("the OAuth access token is malformed");
    const hash = hashId(token);
    const now = this.options.now?.() ?? Date.now();
    const cached = this.cache.get(hash);
    if (cached !== undefined && now - cached.at < (this.options.ttlMs ?? 30_000)) {
      if (cached.exp * 1000 <= now) throw invalidToken("the OAuth access token has expired");
      return cached.principal;
    }
    const { rows } = await this.pool.query<TokenRow>(
      `SELECT s.payload, c.grant_id, c.id AS connection, c.workspace_id, c.group_id, c.tools, c.read_only
         FROM oauth_store s JOIN oauth_connections c ON c.grant_id = s.grant_id
        WHERE s.model = 'AccessToken' AND s.id_hash = $1 AND c.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    if (row === undefined || !tagAgrees(token, row.workspace_id)) {
      this.cache.delete(hash);
      throw invalidToken("the OAuth access token is unknown or revoked");
    }
    const exp = row.payload.exp ?? 0;
    if (exp * 1000 <= now) throw invalidToken("the OAuth access token has expired");
    const audience = Array.isArray(row.payload.aud) ? row.payload.aud : [row.payload.aud];
    if (!audience.includes(this.resource)) {
      throw invalidToken(`the OAuth access token was issued for another resource (not ${this.resource})`);
    }
    const principal: Principal = {
      kind: "scoped",
      workspace: row.workspace_id,
      actor: `oauth:${row.connection}`,
      groupId: row.group_id,
      tools: row.tools,
      ...(row.read_only ? { readOnly: true } : {}),
    };
    if (this.cache.size >= (this.options.maxEntries ?? 10_000)) this.cache.clear();
    this.cache.set(hash, { principal, grant: row.grant_id, exp, at: now });
    return principal;
  }

  /** Drops one cached token (its client revoked it). */
  forget(hash: string): void {
    this.cache.delete(hash);
  }

  /** Drops every cached token of a grant (disconnect, member removed). */
  forgetGrant(grant: string): void {
    for (const [hash, entry] of this.cache) if (entry.grant === grant) this.cache.delete(hash);
  }
}
