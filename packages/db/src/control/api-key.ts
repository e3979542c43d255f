import { hash, randomBytes } from "node:crypto";
import { prefixedId } from "@prim/engine";
import { isApiKeyShape, keyStart, workspaceTag } from "@prim/wire";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;

export function base58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`; // leading zero bytes, as Bitcoin's base58 keeps them
  }
  return out;
}

export function isBase58(text: string): boolean {
  return BASE58_RE.test(text);
}

/** A new key: what is shown once (`key`) and what is stored (`hash`, `start`, `id`). */
export interface NewApiKey {
  id: string;
  key: string;
  hash: string;
  /** The first 8 characters, for display. */
  start: string;
}

/**
 * A key of `workspace`: `pk_<workspace tag>_` + base58 of 24 random bytes (CLOUD.md,
 * Credentials; the tag lets the edge route it, @prim/wire workspace-tag.ts), or `pk_` + the
 * base58 alone for a workspace id without a tag.
 */
export function newApiKey(workspace: string, now = Date.now()): NewApiKey {
  const tag = workspaceTag(workspace);
  const key = `pk_${tag === null ? "" : `${tag}_`}${base58(randomBytes(24))}`;
  return { id: prefixedId("key", now), key, hash: hashKey(key), start: keyStart(key) };
}

/**
 * What is stored and looked up: sha256 of the whole key, hex. Computed on every request, so
 * with the one-shot `crypto.hash` (Node >= 20.12): createHash's Hash object took 3 % of a kv
 * GET's CPU in the cloud-kv bench.
 */
export function hashKey(key: string): string {
  return hash("sha256", key, "hex");
}

/** Whether `text` has the shape of a key (a malformed credential is refused before any lookup). */
export function looksLikeApiKey(text: string): boolean {
  return isApiKeyShape(text);
}
