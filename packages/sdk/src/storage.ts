import type { ObjectInfo, ObjectPage, PresignResult } from "@prim/wire";
import { everyItem } from "./pages.js";
import { PrimitiveClient } from "./primitive-client.js";
import { encodePath, type RawBody } from "./transport.js";

export interface PutObjectOptions {
  contentType?: string;
  metadata?: Record<string, string>;
  /** Write only if the current ETag is this. */
  ifMatch?: string;
  /** Write only if the key does not exist yet. */
  createOnly?: boolean;
  signal?: AbortSignal;
}

export interface GetObjectOptions {
  /** `bytes=0-99`: answers 206 with that part. */
  range?: string;
  /** An ETag: answers 304 when it still matches. */
  ifNoneMatch?: string;
  signal?: AbortSignal;
}

export interface ObjectListOptions {
  prefix?: string;
  /** Rolls keys up to their common prefixes (`/`), listed in `prefixes`. */
  delimiter?: string;
  cursor?: string;
  limit?: number;
}

export interface PresignOptions {
  method?: "GET" | "PUT";
  /** Duration string such as `15m` (default 1h, max 7d). */
  expiresIn?: string;
  /** PUT: the Content-Type the upload must send. */
  contentType?: string;
  /** PUT: the largest body in bytes (413 past it, checked while the body streams). */
  maxSize?: number;
  /** PUT: create-only (`If-None-Match: *`). */
  createOnly?: boolean;
  /** Successful requests the URL serves (1 to 1,000,000); after them it answers 403. */
  maxUses?: number;
}

/** The storage routes of one primitive. Bodies go up and come down as streams, never buffered. */
export class StorageClient extends PrimitiveClient {
  list(options: ObjectListOptions = {}): Promise<ObjectPage> {
    return this.transport.request("GET", `${this.base}/objects`, { query: { ...options } });
  }

  /** Every object (with `prefix`), following cursors. */
  iterate(options: Omit<ObjectListOptions, "cursor" | "delimiter"> = {}): AsyncGenerator<ObjectInfo> {
    return everyItem((cursor) => this.list({ ...options, cursor }));
  }

  /** Writes an object; `body` may be bytes, text, a web stream or a Node stream (streamed). */
  async put(key: string, body: RawBody, options: PutObjectOptions = {}): Promise<ObjectInfo> {
    const headers: Record<string, string> = { "content-type": options.contentType ?? "application/octet-stream" };
    for (const [name, value] of Object.entries(options.metadata ?? {})) headers[`x-object-meta-${name}`] = value;
    if (options.ifMatch !== undefined) headers["if-match"] = options.ifMatch;
    if (options.createOnly) headers["if-none-match"] = "*";
    const res = await this.transport.send("PUT", `${this.base}/objects/${encodePath(key)}`, {
      headers,
      body,
      signal: options.signal,
    });
    return (await res.json()) as ObjectInfo;
  }

  /** The raw response: `body` streams the bytes (200, 206 for a range, 304 without a body). */
  get(key: string, options: GetObjectOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (options.range !== undefined) headers.range = options.range;
    if (options.ifNoneMatch !== undefined) headers["if-none-match"] = options.ifNoneMatch;
    return this.transport.send("GET", `${this.base}/objects/${encodePath(key)}`, { headers, signal: options.signal });
  }

  /** The whole object in memory (small objects; stream large ones with `get`). */
  async bytes(key: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.get(key)).arrayBuffer());
  }

  stat(key: string): Promise<ObjectInfo> {
    return this.transport.request("GET", `${this.base}/objects/${encodePath(key)}`, { query: { stat: 1 } });
  }

  /** Deletes an object (no error when it is already gone). */
  async delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    const headers: Record<string, string> = options.ifMatch === undefined ? {} : { "if-match": options.ifMatch };
    await this.transport.send("DELETE", `${this.base}/objects/${encodePath(key)}`, { headers });
  }

  copy(from: string, to: string, options: { createOnly?: boolean } = {}): Promise<ObjectInfo> {
    return this.transport.request("POST", `${this.base}/copy`, {
      body: { from, to, if_none_match: options.createOnly ? "*" : undefined },
    });
  }

  /** A signed URL for one object: use it with `PrimClient.signed` or any HTTP client. */
  presign(key: string, options: PresignOptions = {}): Promise<PresignResult> {
    return this.transport.request("POST", `${this.base}/presign`, {
      body: {
        key,
        method: options.method,
        expires_in: options.expiresIn,
        content_type: options.contentType,
        max_size: options.maxSize,
        if_none_match: options.createOnly ? "*" : undefined,
        max_uses: options.maxUses,
      },
    });
  }

  /** Invalidates every signed URL issued for this store. */
  revokeSigned(): Promise<{ epoch: number }> {
    return this.transport.request("POST", `${this.base}/presign/revoke`, { body: {} });
  }
}
