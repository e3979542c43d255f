import type { ErrorCode } from "@prim/wire";
import { PrimError } from "./errors.js";

export interface ClientOptions {
  /** Default `http://localhost:7777` (the local engine). */
  baseUrl?: string;
  /** Bearer credential: an API key, or the local engine's root token. */
  token?: string;
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof fetch;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  body?: unknown;
  query?: Query;
  /** Aborts the request (long polls, timeouts). */
  signal?: AbortSignal;
}

/** A raw request body: anything fetch takes, or an async iterable of bytes (a Node stream). */
export type RawBody = RequestInit["body"] | AsyncIterable<Uint8Array>;

export interface SendOptions {
  query?: Query;
  headers?: Record<string, string>;
  body?: RawBody;
  signal?: AbortSignal;
}

/** Sends one request and returns the parsed JSON; every non-2xx becomes a PrimError. */
export class Transport {
  private readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? "http://localhost:7777").replace(/\/+$/, "");
    this.token = options.token;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    const res = await this.send(method, path, { query: options.query, headers, body, signal: options.signal });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  /**
   * A request with a raw body (bytes or a stream) and the raw response, for object routes.
   * Non-2xx answers (other than 304) throw PrimError like `request`.
   */
  send(method: string, path: string, options: SendOptions = {}): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    return this.fetchUrl(url, method, headers, options);
  }

  /** A request to an absolute URL without the bearer credential (signed URLs). */
  sendTo(url: string, method: string, options: Omit<SendOptions, "query"> = {}): Promise<Response> {
    return this.fetchUrl(new URL(url), method, { ...options.headers }, options);
  }

  private async fetchUrl(
    url: URL,
    method: string,
    headers: Record<string, string>,
    options: SendOptions,
  ): Promise<Response> {
    const init: RequestInit & { duplex?: "half" } = { method, headers, body: webBody(options.body) };
    if (options.signal !== undefined) init.signal = options.signal;
    // A streamed request body (a web stream or a Node stream) needs half-duplex mode.
    if (isStream(options.body)) init.duplex = "half";
    const res = await this.fetchImpl(url, init);
    if (res.ok || res.status === 304) return res;
    const text = await res.text();
    let error: { code?: ErrorCode; message?: string } | undefined;
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error;
    } catch {
      error = undefined;
    }
    throw new PrimError(
      res.status,
      error?.code ?? "internal_error",
      error?.message ?? `HTTP ${res.status}`,
      res.headers.get("x-request-id"),
    );
  }
}

/**
 * An async iterable (a Node stream, a generator) as a web stream that pulls one chunk at a time
 * when fetch asks for it. Handed to fetch as is, an iterable is drained as fast as it yields:
 * a 100 MiB upload was held whole in memory (test/streaming.test.ts).
 */
function webBody(body: RawBody): RequestInit["body"] {
  if (body === undefined || body === null || body instanceof ReadableStream || !isStream(body)) {
    return body as RequestInit["body"];
  }
  const iterator = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel(reason) {
        await iterator.return?.(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

function isStream(body: unknown): boolean {
  return (
    body instanceof ReadableStream ||
    (typeof body === "object" && body !== null && Symbol.asyncIterator in body && !(body instanceof Blob))
  );
}

/** Percent-encodes each segment of a key or path, keeping its `/` separators. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
