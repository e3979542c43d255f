import type { KeyBudget, KeyRevoked, MintedKey, MintedKeyInfo } from "@prim/wire";
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
  /**
   * Operations it may spend, in total or per UTC day or month. Required under a key with a
   * budget: the same kind, no larger, and taken out of what the caller has left.
   */
  budget?: KeyBudget;
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
