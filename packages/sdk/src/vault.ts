import type { FetchResult, Grant, Page, SecretInfo, SecretListing } from "@prim/wire";
import { everyItem, type PageOptions } from "./pages.js";
import { PrimitiveClient, seg } from "./primitive-client.js";

/** Where fetch puts the secret: a bearer token, a named header, or a query parameter. */
export type SecretAuth = { bearer: string } | { header: string; secret: string } | { query: string; secret: string };

export interface GrantInput {
  /** The secret's name (`STRIPE_KEY`). */
  name: string;
  allow: { hosts: string[]; methods?: string[] };
  /** The grant lapses after this long (`7d`). */
  ttl?: string;
}

export interface VaultFetchRequest {
  url: string;
  auth: SecretAuth;
  method?: string;
  headers?: Record<string, string>;
  /** Text as is; anything else is sent as JSON. */
  body?: unknown;
  timeout?: string;
}

/**
 * The vault routes of one primitive. Secrets go in and are used by `fetch`; no call answers a
 * secret's value (writes answer its name and version).
 */
export class VaultClient extends PrimitiveClient {
  put(name: string, value: string): Promise<SecretInfo> {
    return this.transport.request("PUT", `${this.base}/secrets/${seg(name)}`, { body: { value } });
  }

  /** Deletes the secret and its grant. */
  async delete(name: string): Promise<void> {
    await this.transport.request("DELETE", `${this.base}/secrets/${seg(name)}`);
  }

  /** A page of secrets: names, versions and grants. */
  secrets(page: PageOptions = {}): Promise<Page<SecretListing>> {
    return this.transport.request("GET", `${this.base}/secrets`, { query: { ...page } });
  }

  iterateSecrets(options: { limit?: number } = {}): AsyncGenerator<SecretListing> {
    return everyItem((cursor) => this.secrets({ ...options, cursor }));
  }

  /** Lets `fetch` use secret `name` for these hosts (and methods). */
  grant(grant: GrantInput): Promise<Grant> {
    return this.transport.request("POST", `${this.base}/grants`, { body: grant });
  }

  grants(page: PageOptions = {}): Promise<Page<Grant>> {
    return this.transport.request("GET", `${this.base}/grants`, { query: { ...page } });
  }

  iterateGrants(options: { limit?: number } = {}): AsyncGenerator<Grant> {
    return everyItem((cursor) => this.grants({ ...options, cursor }));
  }

  async revoke(name: string): Promise<void> {
    await this.transport.request("DELETE", `${this.base}/grants/${seg(name)}`);
  }

  /** An outbound request with the secret injected; the answer has the secret redacted. */
  fetch(request: VaultFetchRequest): Promise<FetchResult> {
    return this.transport.request("POST", `${this.base}/fetch`, { body: request });
  }
}
