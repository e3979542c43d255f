import { promises as dns, type LookupAddress } from "node:dns";
import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { isServiceError, ServiceError } from "@prim/wire";
import { addressAllowed, classifyAddress } from "./address.js";
import { canonicalHost, effectivePort } from "./hosts.js";
import { MAX_REDIRECTS, MAX_RESPONSE_BYTES } from "./limits.js";

/** Where the secret goes in each request: a header (with an optional prefix) or a query parameter. */
export type Injection = { header: string; prefix: string } | { query: string };

export interface OutboundRequest {
  url: URL;
  method: string;
  /** The caller's headers, already checked (lower-case names). */
  headers: Record<string, string>;
  body: Buffer | null;
  /** What is injected where; null sends the request as it is (a plain guarded fetch). */
  secret: string;
  injection: Injection | null;
  /** Largest decoded body accepted (default MAX_RESPONSE_BYTES; past it: 502). */
  maxBytes?: number;
  /** false answers a redirect as it is instead of following it (default true). */
  followRedirects?: boolean;
  /** Checks the grant for one hop (host, method, expiry); throws to stop before anything is sent. */
  authorize(url: URL, method: string): void;
  allowLoopback: boolean;
  timeoutMs: number;
  /** The caller went away. */
  signal?: AbortSignal | undefined;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Response headers that describe the connection or the encoded body, not the content returned. */
const DROPPED_HEADERS = ["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"];

const upstream = (message: string) => new ServiceError("upstream_error", message);
const denied = (message: string) => new ServiceError("secret_policy_denied", message);

/**
 * Makes the request, following redirects by hand: every hop is authorized against the grant and
 * resolved and checked for SSRF before anything is sent, and the connection goes to the address
 * that was checked (a pinned lookup), so DNS cannot change between check and connect.
 */
export async function sendOutbound(req: OutboundRequest): Promise<OutboundResponse> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  const onGone = () => controller.abort();
  req.signal?.addEventListener("abort", onGone, { once: true });
  let url = req.url;
  try {
    let { method, body, headers } = req;
    for (let hop = 0; ; hop++) {
      req.authorize(url, method);
      const address = await pinAddress(url, req.allowLoopback, controller.signal);
      const res = await exchange({ ...req, url, method, headers, body }, address, controller.signal);
      const location = res.headers.location;
      if (!REDIRECTS.has(res.statusCode ?? 0) || location === undefined || req.followRedirects === false) {
        const decoded = await readBody(res, req.maxBytes ?? MAX_RESPONSE_BYTES);
        return { status: res.statusCode ?? 502, headers: keptHeaders(res.headers), body: decoded };
      }
      res.destroy();
      if (hop >= MAX_REDIRECTS) throw upstream(`upstream redirected more than ${MAX_REDIRECTS} times`);
      url = nextUrl(url, location);
      // As browsers do: 303 turns any request into a GET, 301 and 302 turn a POST into one.
      if (
        (res.statusCode === 303 && method !== "HEAD") ||
        (res.statusCode !== 307 && res.statusCode !== 308 && method === "POST")
      ) {
        method = "GET";
        body = null;
        headers = { ...headers };
        delete headers["content-type"];
      }
    }
  } catch (err) {
    if (isServiceError(err)) throw err;
    if (timedOut) throw upstream(`upstream request timed out after ${req.timeoutMs} ms`);
    throw upstream(`upstream request to '${canonicalHost(url)}' failed${errorCode(err)}`);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", onGone);
  }
}

/** A node error's code (`ECONNREFUSED`), never its message: messages can quote what was sent. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : "";
}

function nextUrl(current: URL, location: string): URL {
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw upstream("upstream redirected to an invalid Location");
  }
  if (next.protocol !== "http:" && next.protocol !== "https:") {
    throw upstream("upstream redirected to a URL that is not http or https");
  }
  return next;
}

/** Resolves the hop's host and checks every address it has; answers the one to connect to. */
async function pinAddress(url: URL, allowLoopback: boolean, signal: AbortSignal): Promise<LookupAddress> {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: LookupAddress[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    addresses = await resolve(host, signal);
  }
  // Any non-public address fails the host: a name that also resolves inward is not trusted.
  for (const { address } of addresses) {
    if (!addressAllowed(address, allowLoopback)) {
      const { reason } = classifyAddress(address);
      throw denied(
        `destination '${canonicalHost(url)}' is a blocked address (${address}: ${reason}); fetch reaches public addresses only`,
      );
    }
  }
  return addresses[0] as LookupAddress;
}

async function resolve(host: string, signal: AbortSignal): Promise<LookupAddress[]> {
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(new Error("aborted"));
    signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
  });
  aborted.catch(() => {});
  let addresses: LookupAddress[];
  try {
    addresses = await Promise.race([dns.lookup(host, { all: true, verbatim: true }), aborted]);
  } catch (err) {
    if (signal.aborted) throw err;
    throw upstream(`could not resolve host '${host}'${errorCode(err)}`);
  }
  if (addresses.length === 0) throw upstream(`could not resolve host '${host}'`);
  return addresses;
}

/** A lookup that answers only the checked address, so the connection goes where the check went. */
function pinnedLookup(expected: string, pinned: LookupAddress): LookupFunction {
  return (hostname, options, callback) => {
    if (hostname !== expected) {
      callback(Object.assign(new Error("unexpected host lookup"), { code: "ENOTFOUND" }), "", 0);
    } else if (options.all) {
      callback(null, [pinned]);
    } else {
      callback(null, pinned.address, pinned.family);
    }
  };
}

/** One request/response exchange with the pinned address; resolves when the headers arrive. */
function exchange(req: OutboundRequest, pinned: LookupAddress, signal: AbortSignal): Promise<IncomingMessage> {
  const { url, injection, secret } = req;
  const target = new URL(url);
  const headers: Record<string, string> = {
    ...req.headers,
    host: url.host,
    // Encoded bodies are decoded here, so redaction sees the plain bytes.
    "accept-encoding": "gzip, deflate, br",
  };
  if (injection === null) {
    // nothing to inject
  } else if ("query" in injection) target.searchParams.set(injection.query, secret);
  else headers[injection.header] = `${injection.prefix}${secret}`;
  if (req.body !== null) headers["content-length"] = String(req.body.length);
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === "https:";
  return new Promise<IncomingMessage>((resolvePromise, reject) => {
    const options: https.RequestOptions = {
      host: hostname,
      port: effectivePort(url),
      path: `${target.pathname}${target.search}`,
      method: req.method,
      headers,
      agent: false,
      signal,
      lookup: pinnedLookup(hostname, pinned),
    };
    if (secure && isIP(hostname) === 0) options.servername = canonicalHost(url);
    const outgoing = (secure ? https : http).request(options, resolvePromise);
    outgoing.on("error", reject);
    outgoing.end(req.body ?? undefined);
  });
}

function decoderFor(encoding: string): NodeJS.ReadWriteStream | null {
  switch (encoding) {
    case "":
    case "identity":
      return null;
    case "gzip":
    case "x-gzip":
      return createGunzip();
    case "deflate":
      return createInflate();
    case "br":
      return createBrotliDecompress();
    default:
      throw upstream("upstream answered with an unsupported Content-Encoding");
  }
}

/** The whole body, decoded, at most `maxBytes` (past it: 502, never a truncated body). */
async function readBody(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  let decoder: NodeJS.ReadWriteStream | null;
  try {
    decoder = decoderFor(encoding);
  } catch (err) {
    res.destroy();
    throw err;
  }
  const source: Readable = decoder === null ? res : (pipeline(res, decoder, () => {}) as unknown as Readable);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      // Cutting the body short could split a secret and leak its first part: refuse instead.
      if (size > maxBytes) throw upstream(`upstream response body is larger than ${maxBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    res.destroy();
    throw err;
  }
  return Buffer.concat(chunks);
}

function keptHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept = { ...headers };
  for (const name of DROPPED_HEADERS) delete kept[name];
  return kept;
}

/**
 * A GET through the same guard as a vault fetch (public addresses only, checked on every
 * redirect, the connection pinned to the checked address), with a time and a size limit and
 * nothing injected. Other services use it to fetch documents named by untrusted input.
 */
export function guardedGet(
  url: URL,
  options: {
    timeoutMs: number;
    maxBytes: number;
    headers?: Record<string, string>;
    allowLoopback?: boolean;
    followRedirects?: boolean;
  },
): Promise<OutboundResponse> {
  return sendOutbound({
    url,
    method: "GET",
    headers: options.headers ?? {},
    body: null,
    secret: "",
    injection: null,
    maxBytes: options.maxBytes,
    authorize: () => {},
    allowLoopback: options.allowLoopback ?? false,
    followRedirects: options.followRedirects,
    timeoutMs: options.timeoutMs,
  });
}

/**
 * A POST through the same guard (public addresses only, the connection pinned to the checked
 * address), never following a redirect (its answer is returned as it is): webhook deliveries.
 */
export function guardedPost(
  url: URL,
  body: Buffer,
  options: { timeoutMs: number; maxBytes: number; headers: Record<string, string>; allowLoopback?: boolean },
): Promise<OutboundResponse> {
  return sendOutbound({
    url,
    method: "POST",
    headers: { ...options.headers, "content-length": String(body.length) },
    body,
    secret: "",
    injection: null,
    maxBytes: options.maxBytes,
    authorize: () => {},
    allowLoopback: options.allowLoopback ?? false,
    followRedirects: false,
    timeoutMs: options.timeoutMs,
  });
}
