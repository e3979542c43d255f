import { invalid, type KvEncoding, ServiceError } from "@prim/wire";
import { z } from "zod";
import type { StoredValue } from "./store.js";

/** Longest key, in UTF-8 bytes. Longer keys answer 413 `payload_too_large`. */
export const MAX_KEY_BYTES = 1024;
/** Largest value: its JSON text, or its decoded bytes. Larger values answer 413. */
export const MAX_VALUE_BYTES = 1024 * 1024;
/** Most keys in one mget or mdelete. */
export const MAX_KEYS_PER_CALL = 1000;
/** Most items in one mset (the spec's limit). */
export const MAX_MSET_ITEMS = 100;

// Control characters would make keys unprintable in listings, logs and URLs.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find them
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

export const keySchema = z
  .string()
  .min(1, "must not be empty")
  .refine((key) => !CONTROL_RE.test(key), "must not contain control characters");

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;

export function checkKeySize(key: string, field = "key"): void {
  const bytes = Buffer.byteLength(key, "utf8");
  if (bytes > MAX_KEY_BYTES) {
    throw new ServiceError("payload_too_large", `${field}: key is ${bytes} bytes; the limit is ${MAX_KEY_BYTES}`);
  }
}

/** Turns a request's `value` and `encoding` into what the store keeps, enforcing the size limit. */
export function encodeValue(value: unknown, encoding: KvEncoding, field = "value"): StoredValue {
  let data: string | Buffer;
  if (encoding === "bytes") {
    if (typeof value !== "string" || !BASE64_RE.test(value)) {
      throw invalid(`${field}: with encoding 'bytes' the value must be a base64 string`);
    }
    data = Buffer.from(value, "base64");
  } else {
    data = JSON.stringify(value);
  }
  const size = typeof data === "string" ? Buffer.byteLength(data, "utf8") : data.length;
  if (size > MAX_VALUE_BYTES) {
    throw new ServiceError("payload_too_large", `${field}: value is ${size} bytes; the limit is ${MAX_VALUE_BYTES}`);
  }
  return encoding === "json" ? { data, encoding, json: value } : { data, encoding };
}
