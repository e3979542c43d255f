import { ServiceError } from "@prim/wire";
import { z } from "zod";

/** Largest memory text, in UTF-8 bytes. Over it: 413 `payload_too_large`. */
export const MAX_TEXT_BYTES = 32 * 1024;
/** Largest `metadata`, as JSON text. Over it: 413. */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Most tags on one memory (after removing duplicates). Over it: 400. */
export const MAX_TAGS = 32;
/** Longest tag and kind, in characters. Over it: 400. */
export const MAX_TAG_CHARS = 64;
export const MAX_KIND_CHARS = 64;
/** Longest owner, in characters. Over it: 400. */
export const MAX_OWNER_CHARS = 128;
/** Longest recall query, in characters. Over it: 400. */
export const MAX_QUERY_CHARS = 2000;
/** Most kinds in one recall filter. */
export const MAX_RECALL_KINDS = 32;
/** Recall results: default and maximum `limit`. */
export const RECALL_LIMIT = { default: 10, max: 100 } as const;
/** Consolidate's similarity threshold: default and accepted range (scale 0..1, see README). */
export const CONSOLIDATE_THRESHOLD = { default: 0.8, min: 0.5, max: 1 } as const;

// Control characters would make kinds, tags and owners unprintable in listings and URLs.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find them
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/** A short label: kind, tag or owner. Not blank, no control characters, bounded length. */
function label(max: number) {
  return z
    .string()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim() !== "", "must not be blank")
    .refine((s) => !CONTROL_RE.test(s), "must not contain control characters");
}

export const kindSchema = label(MAX_KIND_CHARS);
export const ownerSchema = label(MAX_OWNER_CHARS);
export const tagSchema = label(MAX_TAG_CHARS);

/** Tags, duplicates removed (first occurrence kept); more than MAX_TAGS distinct is a 400. */
export const tagsSchema = z
  .array(tagSchema)
  .transform((tags) => [...new Set(tags)])
  .refine((tags) => tags.length <= MAX_TAGS, `at most ${MAX_TAGS} distinct tags`);

/** The text is checked for size by `checkText` (413), not here (400). */
export const textSchema = z
  .string()
  .min(1, "must not be empty")
  .refine((s) => s.trim() !== "", "must not be blank");

export const metadataSchema = z.record(z.string(), z.unknown());

export function checkText(text: string, field = "text"): void {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_TEXT_BYTES) {
    throw new ServiceError("payload_too_large", `${field}: text is ${bytes} bytes; the limit is ${MAX_TEXT_BYTES}`);
  }
}

/** The metadata as stored (JSON text), enforcing its size limit. */
export function encodeMetadata(metadata: Record<string, unknown>, field = "metadata"): string {
  const json = JSON.stringify(metadata);
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > MAX_METADATA_BYTES) {
    throw new ServiceError(
      "payload_too_large",
      `${field}: metadata is ${bytes} bytes of JSON; the limit is ${MAX_METADATA_BYTES}`,
    );
  }
  return json;
}
