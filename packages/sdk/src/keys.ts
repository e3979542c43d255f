import { seg } from "./primitive-client.js";
import type { Transport } from "./transport.js";

/**
 * Minted keys (cloud only): the calling key mints children at most as wide as itself, lists
 * the keys under it, and revokes any of them with everything under that one.
 */

export interface MintOptions {
  name?: string;
  /** A group name or id; null = every group (only from an every-group key); omitted = the caller's. */
  group?: string | null;
  /** Tool names or patterns, each covered by the caller's; omitted = the caller's. */
  tools?: string[];
  /** Omitted = the caller's; a read-only key mints read-only keys only. */
  read_only?: boolean;
  /** Ms since the epoch, no later than the caller's own expiry; omitted = the caller's. */
  expires_at?: number;
  /** CIDRs, each inside one of the caller's allowlist; omitted = the caller's. */
  ip_allow?: string[];
}

/** What `mint` answers: the key itself, shown this once. */
export interface MintedKey {
  id: string;
  key: string;
  name: string | null;
  group: string | null;
  tools: string[] | null;
  read_only: boolean;
  /** Ms since the epoch, or null: never. */
  expires_at: number | null;
  ip_allow: string[] | null;
  /** The id of the key that minted it. */
  parent: string;
  created_at: number;
}

/** A key under the caller, as `list` shows it (never the key). */
export interface MintedKeyInfo {
  id: string;
  /** The key's first 8 characters. */
  start: string;
  name: string | null;
  group: string | null;
  tools: string[] | null;
  read_only: boolean;
  parent: string;
  depth: number;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface KeyRevoked {
  id: string;
  revoked_at: number;
  /** Every key revoked by this call: the key, then the keys under it. */
  revoked: string[];
}

export class KeysClient {
  constructor(private readonly transport: Transport) {}

  /** `POST /v1/keys`: a child of the calling key; anything wider than it is 403 `forbidden`. */
  mint(options: MintOptions = {}): Promise<MintedKey> {
    return this.transport.request("POST", "/v1/keys", { body: { ...options } });
  }

  /** `GET /v1/keys`: the keys the caller minted and their descendants. */
  async list(): Promise<MintedKeyInfo[]> {
    return (await this.transport.request<{ data: MintedKeyInfo[] }>("GET", "/v1/keys")).data;
  }

  /** `DELETE /v1/keys/{id}`: revokes a key under the caller and its whole subtree (404 for any other). */
  revoke(id: string): Promise<KeyRevoked> {
    return this.transport.request("DELETE", `/v1/keys/${seg(id)}`);
  }
}
