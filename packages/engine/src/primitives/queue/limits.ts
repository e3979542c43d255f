import { ServiceError } from "@prim/wire";
import { z } from "zod";
import { queueDuration } from "../../core/duration.js";
import { nameSchema } from "../../core/names.js";

/** A job body, as JSON text, may be at most this large (413 over it). */
export const MAX_BODY_BYTES = 256 * 1024;
/** `dedupe_key` length in characters. */
export const MAX_DEDUPE_KEY = 256;
/** `error` kept on a job (`last_error`) is cut to this many characters. */
export const MAX_ERROR_CHARS = 2048;

export const DEFAULT_LEASE_MS = 30_000;
/** Longest lease a receive or heartbeat may take. */
export const MAX_LEASE_MS = 12 * 3_600_000;
/** Longest long poll (`wait`) of a receive. */
export const MAX_WAIT_MS = 30_000;
/** Entries per batch send, ack or publish. */
export const MAX_BATCH = 100;
/** Jobs per receive. */
export const MAX_RECEIVE = 100;
export const DEFAULT_MAX_ATTEMPTS = 5;
export const MAX_ATTEMPTS_LIMIT = 1000;
/** Longest `delay` or retry `in`. */
export const MAX_DELAY_MS = 365 * 86_400_000;
/** Priorities run from -1000 to 1000; higher is received first. */
export const MAX_PRIORITY = 1000;

/** Retry backoff when `in` is absent: 1 s doubling per attempt, at most 1 hour. */
export function backoffMs(attempts: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

export const queueNameSchema = nameSchema;

/** A queue duration (string or integer ms) with its own bounds. */
export function boundedDuration(min: number, max: number, what: string) {
  return queueDuration.refine((ms) => ms >= min && ms <= max, {
    message: `${what} must be between ${min}ms and ${max}ms`,
  });
}

export const bodySchema = z.unknown().refine((v) => v !== undefined, { message: "required" });

/** The body as stored: JSON text, within the size limit. */
export function encodeBody(body: unknown, field = "body"): string {
  const text = JSON.stringify(body);
  if (Buffer.byteLength(text, "utf8") > MAX_BODY_BYTES) {
    throw new ServiceError("payload_too_large", `${field}: at most ${MAX_BODY_BYTES} bytes of JSON`);
  }
  return text;
}
