import type { ObjectInfo } from "@prim/wire";
import { encodePath, type Transport } from "./transport.js";

export interface ObjectPage {
  data: ObjectInfo[];
  prefixes: string[];
  next_cursor: string | null;
}

export interface PutObjectOptions {
  contentType?: string;
  metadata?: Record<string, string>;
  /** Write only if the current ETag is this. */
  ifMatch?: string;
  /** Write only if the key does not exist yet. */
  createOnly?: boolean;
}

export interface PresignOptions {
  method?: "GET" | "PUT";
  /** Duration string such as `15m` (default 1h, max 7d). */
  expiresIn?: string;
  contentType?: string;
  maxSize?: number;
  createOnly?: boolean;
}

export interface Presigned {
  url: string;
  method: "GET" | "PUT";
  headers: Record<string, string>;
  expires_at: number;
}

/** The storage routes of one primitive. Bodies go up and come down as raw bytes or streams. */
export class StorageClient {
  private readonly base: string;

  constructor(
    private readonly transport: Transport,
    readonly id: string,
  ) {
    this.base = `/v1/primitives/${encodeURIComponent(id)}`;
  }

  list(options: { prefix?: string; delimiter?: string; cursor?: string; limit?: number } = {}): Promise<ObjectPage> {
    return this.transport.request("GET", `${this.base}/objects`, { query: { ...options } });
  }

  async put(key: string, body: RequestInit["body"], options: PutObjectOptions = {}): Promise<ObjectInfo> {
    const headers: Record<string, string> = { "content-type": options.contentType ?? "application/octet-stream" };
    for (const [name, value] of Object.entries(options.metadata ?? {})) headers[`x-object-meta-${name}`] = value;
    if (options.ifMatch !== undefined) headers["if-match"] = options.ifMatch;
    if (options.createOnly) headers["if-none-match"] = "*";
    const res = await this.transport.send("PUT", `${this.base}/objects/${encodePath(key)}`, { headers, body });
    return (await res.json()) as ObjectInfo;
  }

  /** The raw response: `body` streams the bytes; pass `range` (`bytes=0-99`) for part of them. */
  get(key: string, options: { range?: string; ifNoneMatch?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (options.range !== undefined) headers.range = options.range;
    if (options.ifNoneMatch !== undefined) headers["if-none-match"] = options.ifNoneMatch;
    return this.transport.send("GET", `${this.base}/objects/${encodePath(key)}`, { headers });
  }

  async bytes(key: string): Promise<Buffer> {
    return Buffer.from(await (await this.get(key)).arrayBuffer());
  }

  stat(key: string): Promise<ObjectInfo> {
    return this.transport.request("GET", `${this.base}/objects/${encodePath(key)}`, { query: { stat: 1 } });
  }

  async delete(key: string, options: { ifMatch?: string } = {}): Promise<void> {
    const headers: Record<string, string> = options.ifMatch === undefined ? {} : { "if-match": options.ifMatch };
    await this.transport.send("DELETE", `${this.base}/objects/${encodePath(key)}`, { headers });
  }

  copy(from: string, to: string, options: { createOnly?: boolean } = {}): Promise<ObjectInfo> {
    return this.transport.request("POST", `${this.base}/copy`, {
      body: { from, to, if_none_match: options.createOnly ? "*" : undefined },
    });
  }

  presign(key: string, options: PresignOptions = {}): Promise<Presigned> {
    return this.transport.request("POST", `${this.base}/presign`, {
      body: {
        key,
        method: options.method,
        expires_in: options.expiresIn,
        content_type: options.contentType,
        max_size: options.maxSize,
        if_none_match: options.createOnly ? "*" : undefined,
      },
    });
  }

  revokeSigned(): Promise<{ epoch: number }> {
    return this.transport.request("POST", `${this.base}/presign/revoke`, { body: {} });
  }
}
