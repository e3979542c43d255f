import type { KeyMintRequest, KeyRevoked, MintedKey, MintedKeyInfo } from "@prim/wire";
import { seg } from "./primitive-client.js";
import type { Transport } from "./transport.js";

/**
 * Minted keys (cloud only): the calling key mints children at most as wide as itself, lists
 * the keys under it, and revokes any of them with everything under that one.
 */

/**
 * What a child may be (`@prim/wire`'s `KeyMintRequest`, the REST body and the MCP tool
 * `key_mint`'s arguments): each omitted property is the caller's. A read-only key mints nothing.
 */
export type MintOptions = KeyMintRequest;

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
