import type { KvEncoding, KvEntry, Page } from "@prim/wire";
import { PrimError } from "./errors.js";
import { everyItem } from "./pages.js";
import { PrimitiveClient } from "./primitive-client.js";
import { encodePath } from "./transport.js";

export interface KvSetOptions {
  encoding?: KvEncoding;
  /** Duration string such as `30s`; without it any expiry is cleared. */
  ttl?: string;
  /** Expected current version; 0 means the key must not exist. */
  ifVersion?: number;
}

export interface KvSetItem extends KvSetOptions {
  key: string;
  value: unknown;
}

export interface KvListOptions {
  prefix?: string;
  cursor?: string;
  limit?: number;
  values?: boolean;
}

const setBody = (value: unknown, o: KvSetOptions) => ({
  value,
  encoding: o.encoding,
  ttl: o.ttl,
  if_version: o.ifVersion,
});

/** The kv routes of one primitive. */
export class KvClient extends PrimitiveClient {
  get(key: string): Promise<KvEntry> {
    return this.transport.request("GET", `${this.base}/keys/${encodePath(key)}`);
  }

  /** Like `get`, but a missing or expired key gives null instead of throwing. */
  async find(key: string): Promise<KvEntry | null> {
    try {
      return await this.get(key);
    } catch (err) {
      if (err instanceof PrimError && err.code === "not_found") return null;
      throw err;
    }
  }

  set(key: string, value: unknown, options: KvSetOptions = {}): Promise<KvEntry> {
    return this.transport.request("PUT", `${this.base}/keys/${encodePath(key)}`, { body: setBody(value, options) });
  }

  delete(key: string, options: { ifVersion?: number } = {}): Promise<{ deleted: boolean }> {
    return this.transport.request("DELETE", `${this.base}/keys/${encodePath(key)}`, {
      query: { if_version: options.ifVersion },
    });
  }

  list(options: KvListOptions = {}): Promise<Page<KvEntry>> {
    return this.transport.request("GET", `${this.base}/keys`, {
      query: { prefix: options.prefix, cursor: options.cursor, limit: options.limit, values: options.values },
    });
  }

  /** Every key (with `prefix`), following cursors. */
  iterate(options: Omit<KvListOptions, "cursor"> = {}): AsyncGenerator<KvEntry> {
    return everyItem((cursor) => this.list({ ...options, cursor }));
  }

  /**
   * Entries in request order (null where missing). An answer carries at most ~8 MiB: past it,
   * `data` holds the first keys that fit and `truncated` is true; ask again for the rest.
   */
  mget(keys: string[]): Promise<{ data: (KvEntry | null)[]; truncated: boolean }> {
    return this.transport.request("POST", `${this.base}/mget`, { body: { keys } });
  }

  mset(items: KvSetItem[], options: { atomic?: boolean } = {}): Promise<{ data: KvEntry[] }> {
    return this.transport.request("POST", `${this.base}/mset`, {
      body: { items: items.map((i) => ({ key: i.key, ...setBody(i.value, i) })), atomic: options.atomic },
    });
  }

  mdelete(keys: string[]): Promise<{ deleted: number }> {
    return this.transport.request("POST", `${this.base}/mdelete`, { body: { keys } });
  }

  incr(key: string, options: { by?: number; ttl?: string } = {}): Promise<KvEntry> {
    return this.transport.request("POST", `${this.base}/incr`, { body: { key, by: options.by, ttl: options.ttl } });
  }
}
