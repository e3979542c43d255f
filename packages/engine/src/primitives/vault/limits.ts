import { ServiceError } from "@prim/wire";
import { z } from "zod";

/**
 * Secret names: an upper-case letter, then upper-case letters, digits and `_`, at most 63
 * characters (`OPENAI_API_KEY`). The shape of an environment variable, so a name never needs
 * escaping in a URL, a header or a log line.
 */
export const SECRET_NAME_RE = /^[A-Z][A-Z0-9_]{0,62}$/;

export const secretNameSchema = z
  .string()
  .regex(SECRET_NAME_RE, "must be 1-63 characters of A-Z, 0-9 and '_', starting with a letter");

/** Largest secret value, in UTF-8 bytes (413 `payload_too_large` over it). */
export const MAX_SECRET_BYTES = 64 * 1024;
/** Most host patterns in one grant. */
export const MAX_GRANT_HOSTS = 100;

/** Methods a grant may allow and a fetch may use. */
export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Lower-case methods are accepted and upper-cased. */
export const methodSchema = z
  .string()
  .transform((m) => m.toUpperCase())
  .pipe(z.enum(HTTP_METHODS, { error: `must be one of ${HTTP_METHODS.join(", ")}` }));

/** Longest fetch URL, in characters. */
export const MAX_URL_CHARS = 8 * 1024;
/** Largest fetch request body, in UTF-8 bytes (413 over it). */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;
/** Most request headers a fetch may set. */
export const MAX_REQUEST_HEADERS = 64;
/** Largest upstream response body (after decompression); a larger one is 502 `upstream_error`. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Whole-request deadline (every redirect hop included) unless the call sets `timeout`. */
export const DEFAULT_FETCH_TIMEOUT_MS = 10_000;
export const MAX_FETCH_TIMEOUT_MS = 30_000;
/** Redirects followed before the fetch gives up with 502. */
export const MAX_REDIRECTS = 5;

export function checkSecretSize(value: string): void {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > MAX_SECRET_BYTES) {
    // The size only: never any part of the value.
    throw new ServiceError("payload_too_large", `value: secret is ${bytes} bytes; the limit is ${MAX_SECRET_BYTES}`);
  }
}
