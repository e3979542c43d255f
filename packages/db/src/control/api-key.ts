import { hash, randomBytes } from "node:crypto";
import { prefixedId } from "@prim/engine";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** `pk_` + base58 of 24 random bytes (CLOUD.md, Credentials): 32 or 33 characters after the prefix. */
const KEY_RE = /^pk_[1-9A-HJ-NP-Za-km-z]{30,34}$/;

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

export function newApiKey(now = Date.now()): NewApiKey {
  const key = `pk_${base58(randomBytes(24))}`;
  return { id: prefixedId("key", now), key, hash: hashKey(key), start: key.slice(0, 8) };
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
  return KEY_RE.test(text);
}
