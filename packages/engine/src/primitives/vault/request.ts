import { invalid, ServiceError } from "@prim/wire";
import { z } from "zod";
import type { Clock } from "../../core/clock.js";
import { hostAllowed } from "./hosts.js";
import { MAX_REQUEST_BODY_BYTES, MAX_REQUEST_HEADERS, MAX_URL_CHARS, secretNameSchema } from "./limits.js";
import type { Injection } from "./outbound.js";
import type { VaultStore } from "./store.js";

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** What Node (and HTTP) accept in a header value: no CR, LF or other controls but tab. */
const HEADER_VALUE_RE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

/**
 * Headers a caller may not set: the engine owns framing, the connection and the body encoding
 * (it decodes bodies so redaction sees plain bytes), `Host` would let a shared front end route
 * the secret to another site, and `Range` could fetch an echoed secret a few bytes at a time,
 * below what redaction can recognise.
 */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-authorization",
  "proxy-connection",
  "accept-encoding",
  "range",
  "if-range",
]);

export const authSchema = z.union(
  [
    z.strictObject({ bearer: secretNameSchema }),
    z.strictObject({ header: z.string().regex(HEADER_NAME_RE, "must be a header name"), secret: secretNameSchema }),
    z.strictObject({ query: z.string().min(1).max(256), secret: secretNameSchema }),
  ],
  { error: "must be { bearer: NAME }, { header: 'X-Api-Key', secret: NAME } or { query: 'key', secret: NAME }" },
);
export type AuthInput = z.infer<typeof authSchema>;

/** The secret an `auth` names and where it goes. */
export function injectionOf(auth: AuthInput): { name: string; injection: Injection } {
  if ("bearer" in auth) return { name: auth.bearer, injection: { header: "authorization", prefix: "Bearer " } };
  if ("header" in auth) return { name: auth.secret, injection: { header: auth.header.toLowerCase(), prefix: "" } };
  return { name: auth.secret, injection: { query: auth.query } };
}

/** The request URL: absolute http(s), no credentials in it. */
export function parseTargetUrl(text: string): URL {
  if (text.length > MAX_URL_CHARS) throw invalid(`url: at most ${MAX_URL_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("url: not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalid("url: only http and https URLs can be fetched");
  if (url.username !== "" || url.password !== "") throw invalid("url: must not carry a user name or password");
  url.hash = "";
  return url;
}

/** The caller's headers, lower-cased and checked; the secret's own header is refused too. */
export function checkHeaders(given: Record<string, string> | undefined, injection: Injection): Record<string, string> {
  // The secret may not take over a header the engine owns (`Host`, framing) either.
  if ("header" in injection && (RESERVED_HEADERS.has(injection.header) || injection.header.startsWith("proxy-"))) {
    throw invalid(`auth.header: '${injection.header}' is set by the engine and cannot carry a secret`);
  }
  const out: Record<string, string> = {};
  const entries = Object.entries(given ?? {});
  if (entries.length > MAX_REQUEST_HEADERS) throw invalid(`headers: at most ${MAX_REQUEST_HEADERS} headers`);
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (!HEADER_NAME_RE.test(rawName)) throw invalid(`headers: '${rawName}' is not a header name`);
    if (!HEADER_VALUE_RE.test(value)) throw invalid(`headers.${rawName}: contains characters a header cannot carry`);
    if (RESERVED_HEADERS.has(name) || name.startsWith("proxy-")) {
      throw invalid(`headers.${rawName}: set by the engine, not by the caller`);
    }
    if ("header" in injection && name === injection.header) {
      throw invalid(`headers.${rawName}: carries the secret and is set by the engine`);
    }
    out[name] = value;
  }
  return out;
}

/** The body to send: a string as is, any other JSON value as JSON (with a JSON content type). */
export function requestBody(body: unknown, method: string, headers: Record<string, string>): Buffer | null {
  if (body === undefined) return null;
  if (method === "GET" || method === "HEAD") throw invalid(`body: a ${method} request has no body`);
  const text = typeof body === "string" ? body : JSON.stringify(body);
  if (typeof body !== "string") headers["content-type"] ??= "application/json";
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length > MAX_REQUEST_BODY_BYTES) {
    throw new ServiceError("payload_too_large", `body: ${bytes.length} bytes; the limit is ${MAX_REQUEST_BODY_BYTES}`);
  }
  return bytes;
}

/** A header-borne secret must be sendable in a header (checked without saying why in its words). */
export function checkInjectable(value: string, name: string, injection: Injection): void {
  if ("header" in injection && !HEADER_VALUE_RE.test(`${injection.prefix}${value}`)) {
    throw invalid(`auth: secret '${name}' contains characters a header cannot carry; use the query form`);
  }
}

/**
 * The grant check of one hop, read afresh each time (a revoked or expiring grant stops a redirect
 * chain): a grant must exist (403), be unexpired by the engine clock (410), and allow the method
 * and host (403).
 */
export function grantCheck(store: VaultStore, clock: Clock, name: string): (url: URL, method: string) => void {
  return (url, method) => {
    const grant = store.grant(name);
    if (grant === null) {
      throw new ServiceError(
        "secret_policy_denied",
        `secret '${name}' has no grant; an account must grant hosts first`,
      );
    }
    if (grant.expires_at !== null && clock.now() >= grant.expires_at) {
      throw new ServiceError("secret_grant_expired", `the grant of secret '${name}' expired at ${grant.expires_at}`);
    }
    if (grant.methods !== null && !grant.methods.includes(method)) {
      throw new ServiceError("secret_policy_denied", `the grant of secret '${name}' does not allow method ${method}`);
    }
    if (!hostAllowed(grant.hosts, url)) {
      throw new ServiceError("secret_policy_denied", `the grant of secret '${name}' does not allow host '${url.host}'`);
    }
  };
}
