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
    const res = await this.send(method, path, { query: options.query, headers, body });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  /**
   * A request with a raw body (bytes or a stream) and the raw response, for object routes.
   * Non-2xx answers (other than 304) throw PrimError like `request`.
   */
  async send(
    method: string,
    path: string,
    options: { query?: Query; headers?: Record<string, string>; body?: RequestInit["body"] } = {},
  ): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    const init: RequestInit & { duplex?: "half" } = { method, headers, body: options.body };
    // A streamed request body needs half-duplex mode in Node's fetch.
    if (options.body instanceof ReadableStream) init.duplex = "half";
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

/** Percent-encodes each segment of a key or path, keeping its `/` separators. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
