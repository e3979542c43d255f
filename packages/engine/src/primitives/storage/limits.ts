import { ServiceError } from "@prim/wire";
import { z } from "zod";

/** Largest object: 5 GiB, streamed. Over it: 413. */
export const MAX_OBJECT_BYTES = 5 * 1024 ** 3;
/** Longest key in UTF-8 bytes. Over it: 413. */
export const MAX_OBJECT_KEY_BYTES = 1024;
/** Objects up to this size live inside the primitive's SQLite file; larger ones are blobs. */
export const INLINE_OBJECT_BYTES = 16 * 1024;
/** Total size of `x-object-meta-*` names and values. Over it: 400. */
export const MAX_METADATA_BYTES = 2048;
/** Longest signed-URL lifetime. */
export const MAX_PRESIGN_MS = 7 * 24 * 3600 * 1000;
export const DEFAULT_PRESIGN_MS = 3600 * 1000;
/** Most successful uses a signed URL's `max_uses` may allow. */
export const MAX_SIGNED_USES = 1_000_000;

// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find them
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

export const objectKeySchema = z
  .string()
  .min(1, "must not be empty")
  .refine((key) => !CONTROL_RE.test(key), "must not contain control characters")
  .refine((key) => Buffer.byteLength(key) <= MAX_OBJECT_KEY_BYTES * 4, "is far too long");

export function checkObjectKey(key: string, field = "key"): void {
  const bytes = Buffer.byteLength(key, "utf8");
  if (bytes > MAX_OBJECT_KEY_BYTES) {
    throw new ServiceError(
      "payload_too_large",
      `${field}: key is ${bytes} bytes; the limit is ${MAX_OBJECT_KEY_BYTES}`,
    );
  }
}

/**
 * Text that is sent back as an HTTP header value (`Content-Type`, `x-object-meta-*`): no
 * control characters — CR/LF would split the header, and Node refuses to send any of them, so
 * a stored one would break every later GET — and nothing past U+00FF, which a header cannot
 * carry. Bytes 0x80-0xFF stay allowed: a UTF-8 value sent in a REST header arrives as them.
 */
const HEADER_TEXT_RE = /^[\u0020-\u007e\u0080-\u00ff]*$/;
const HEADER_TEXT_MESSAGE =
  "must not contain control characters or characters past U+00FF (it is sent as an HTTP header)";
export const headerTextSchema = z.string().regex(HEADER_TEXT_RE, HEADER_TEXT_MESSAGE);

/** An object's or a signed upload's Content-Type. */
export const contentTypeSchema = headerTextSchema.min(1).max(255);

export const metadataSchema = z
  .record(z.string().regex(/^[a-z0-9!#$%&'*+.^_`|~-]+$/, "metadata names must be header tokens"), headerTextSchema)
  .refine(
    (m) =>
      Object.entries(m).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0) <= MAX_METADATA_BYTES,
    `metadata may hold at most ${MAX_METADATA_BYTES} bytes`,
  );
