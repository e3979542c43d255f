import { invalid } from "./errors.js";
import { credentialTag, isApiKeyShape, WORKSPACE_TAG_PATTERN } from "./workspace-tag.js";

/**
 * Offline attenuation of API keys (issue 41, item 3), in the macaroon manner: a holder appends
 * caveats to a key without calling the server, each one chained with HMAC-SHA256 onto the last,
 * so the result can only be weaker. Written here on WebCrypto (`crypto.subtle`, async; Node and
 * browsers alike) rather than with the `macaroon` package: the chain is forty lines, the format
 * is ours (text caveats the server parses itself), and this package has no runtime dependencies.
 *
 * Token: `pa_<id>.<caveat>.<caveat>…​.<sig>`, every part after the id base64url (no padding).
 * - `id`: the first 32 hex characters of the root key's sha256 — what the server looks the root
 *   up by (it stores only sha256(key)). Half a hash: it cannot stand in for the whole one.
 * - `sig_0 = HMAC(sha256(root key) as 32 bytes, "prim-attenuate-v1:" + id)`;
 *   `sig_i = HMAC(sig_{i-1}, caveat_i)`; the token carries `sig_n` only. Anyone holding a `pa_`
 *   token can append more caveats (from `sig_n`), no one can drop, change or reorder one.
 * The root secret is the stored hash, so whoever reads `api_keys.hash` can make narrowed tokens
 * of that key (never wider than the key); it cannot recover the key itself.
 * A token of a tagged key carries the key's workspace tag: `pa_<tag>_<id>.…` (workspace-tag.ts),
 * for the edge to route by. Like a key's, it is a hint outside the chain: the server refuses a
 * tag that is not the root key's workspace's.
 */

export const ATTENUATED_PREFIX = "pa_";
/** At most this many caveats in one token (a bound on the server's work per token). */
export const MAX_CAVEATS = 32;
const MAX_TOKEN_LENGTH = 8192;
const CONTEXT = "prim-attenuate-v1:";
const TAG_RE = new RegExp(`^(${WORKSPACE_TAG_PATTERN})_`);

export type Caveat =
  /** Only this group (a name or id), which must lie within the key's. */
  | { type: "group"; group: string }
  /** Only tools matching one of these patterns, as well as the key's allowlist. */
  | { type: "tools"; tools: readonly string[] }
  /** Nothing that writes. */
  | { type: "read_only" }
  /** Refused from this instant on (ms since the epoch). */
  | { type: "expires"; at: number }
  /** Only from a client address in one of these CIDR blocks (or plain addresses). */
  | { type: "ip"; cidrs: readonly string[] };

const ID_RE = /^[0-9a-f]{32}$/;
const PART_RE = /^[A-Za-z0-9_-]+$/;
const TOOL_RE = /^[a-z0-9_*]{1,64}$/;
const CIDR_RE = /^[0-9a-fA-F:.]{2,45}(\/\d{1,3})?$/;

/** The caveat's canonical text, the bytes the chain signs: `group=app`, `tools=kv_get,kv_list`, `read_only`, `expires=<ms>`, `ip=10.0.0.0/8`. */
export function encodeCaveat(caveat: Caveat): string {
  return checkCaveat(caveat).text;
}

/** The caveat a text stands for; 400 `invalid_request` for anything else (the server treats it as a bad token). */
export function parseCaveat(text: string): Caveat {
  const eq = text.indexOf("=");
  const name = eq < 0 ? text : text.slice(0, eq);
  const value = eq < 0 ? undefined : text.slice(eq + 1);
  let caveat: Caveat;
  if (name === "read_only" && value === undefined) caveat = { type: "read_only" };
  else if (value === undefined) throw invalid(`caveat '${text}' is not one of group, tools, read_only, expires, ip`);
  else if (name === "group") caveat = { type: "group", group: value };
  else if (name === "tools") caveat = { type: "tools", tools: value.split(",") };
  else if (name === "expires") caveat = { type: "expires", at: /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN };
  else if (name === "ip") caveat = { type: "ip", cidrs: value.split(",") };
  else throw invalid(`caveat '${text}' is not one of group, tools, read_only, expires, ip`);
  const checked = checkCaveat(caveat);
  // One text per caveat: a different spelling of the same caveat would be a second signature.
  if (checked.text !== text) throw invalid(`caveat '${text}' is not in its canonical form`);
  return checked.caveat;
}

function checkCaveat(caveat: Caveat): { caveat: Caveat; text: string } {
  switch (caveat.type) {
    case "group":
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(caveat.group))
        throw invalid(`group caveat: '${caveat.group}' is not a group name or id`);
      return { caveat, text: `group=${caveat.group}` };
    case "tools":
      if (caveat.tools.length === 0 || caveat.tools.some((t) => !TOOL_RE.test(t))) {
        throw invalid("tools caveat: a non-empty list of tool names or patterns (kv_get, fs_*)");
      }
      return { caveat, text: `tools=${caveat.tools.join(",")}` };
    case "read_only":
      return { caveat, text: "read_only" };
    case "expires":
      if (!Number.isSafeInteger(caveat.at) || caveat.at < 0) throw invalid("expires caveat: ms since the epoch");
      return { caveat, text: `expires=${caveat.at}` };
    case "ip":
      if (caveat.cidrs.length === 0 || caveat.cidrs.some((c) => !CIDR_RE.test(c))) {
        throw invalid("ip caveat: a non-empty list of addresses or CIDR blocks");
      }
      return { caveat, text: `ip=${caveat.cidrs.join(",")}` };
    default:
      throw invalid("unknown caveat");
  }
}

/** A token's parts, by shape only (nothing verified); null when it is no `pa_` token. */
export interface AttenuatedParts {
  /** The workspace tag it claims (its root key's), or null for a token of an untagged key. */
  tag: string | null;
  /** The first 32 hex characters of the root key's sha256. */
  id: string;
  /** Caveat texts in order. */
  caveats: string[];
  sig: Uint8Array;
}

export function isAttenuatedToken(text: string): boolean {
  return text.startsWith(ATTENUATED_PREFIX);
}

export function parseAttenuated(token: string): AttenuatedParts | null {
  if (!token.startsWith(ATTENUATED_PREFIX) || token.length > MAX_TOKEN_LENGTH) return null;
  let rest = token.slice(ATTENUATED_PREFIX.length);
  const tag = TAG_RE.exec(rest)?.[1] ?? null;
  if (tag !== null) rest = rest.slice(tag.length + 1);
  const parts = rest.split(".");
  const id = parts.shift();
  const sig = parts.pop();
  if (id === undefined || !ID_RE.test(id) || sig === undefined || parts.length === 0 || parts.length > MAX_CAVEATS) {
    return null;
  }
  if (![sig, ...parts].every((p) => PART_RE.test(p))) return null;
  // Only the canonical encoding: a last character differing in its unused bits decodes to the
  // same bytes, so one token would have many spellings (each a "first" verification).
  const decoded = [sig, ...parts].map(fromBase64url);
  if (decoded.some((bytes, i) => base64url(bytes) !== [sig, ...parts][i])) return null;
  const sigBytes = decoded[0] as Uint8Array;
  if (sigBytes.length !== 32) return null;
  return { tag, id, caveats: decoded.slice(1).map((bytes) => new TextDecoder().decode(bytes)), sig: sigBytes };
}

/**
 * Narrows `token` (a `pk_` key or a `pa_` token) by `caveats`, offline. The result is weaker
 * than `token` on every caveat it adds and keeps all it had.
 */
export async function attenuate(token: string, caveats: readonly Caveat[]): Promise<string> {
  if (caveats.length === 0) throw invalid("attenuate: give at least one caveat");
  const texts = caveats.map(encodeCaveat);
  let id: string;
  let sig: Uint8Array;
  let before: string[];
  let tag: string | null;
  if (isApiKeyShape(token)) {
    tag = credentialTag(token);
    const hash = await sha256(utf8(token));
    id = hex(hash).slice(0, 32);
    sig = await rootSignature(hash, id);
    before = [];
  } else {
    const parts = parseAttenuated(token);
    if (parts === null) throw invalid("attenuate: the token is neither a pk_ key nor a pa_ token");
    ({ tag, id, sig, caveats: before } = parts);
  }
  if (before.length + texts.length > MAX_CAVEATS) throw invalid(`attenuate: at most ${MAX_CAVEATS} caveats`);
  for (const text of texts) sig = await hmac(sig, utf8(text));
  return `${ATTENUATED_PREFIX}${tag === null ? "" : `${tag}_`}${id}.${[...before, ...texts].map((t) => base64url(utf8(t))).join(".")}.${base64url(sig)}`;
}

/**
 * The server's check: recomputes the chain from the root key's stored hash (64 hex) and compares
 * in constant time. The caveats in order when it holds; null for a forged, tampered, reordered,
 * truncated or unparsable token.
 */
export async function verifyAttenuated(parts: AttenuatedParts, rootHashHex: string): Promise<Caveat[] | null> {
  if (!/^[0-9a-f]{64}$/.test(rootHashHex) || !rootHashHex.startsWith(parts.id)) return null;
  let sig = await rootSignature(fromHex(rootHashHex), parts.id);
  for (const text of parts.caveats) sig = await hmac(sig, utf8(text));
  let diff = 0;
  for (let i = 0; i < 32; i++) diff |= (sig[i] ?? 0) ^ (parts.sig[i] ?? 0);
  if (diff !== 0) return null;
  try {
    return parts.caveats.map(parseCaveat);
  } catch {
    return null;
  }
}

function rootSignature(rootHash: Uint8Array, id: string): Promise<Uint8Array> {
  return hmac(rootHash, utf8(CONTEXT + id));
}

async function hmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, message));
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const fromHex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (h) => Number.parseInt(h, 16));

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function base64url(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = i + 2 < bytes.length ? 4 : i + 1 < bytes.length ? 3 : 2;
    for (let j = 0; j < chars; j++) out += B64[(n >> (18 - 6 * j)) & 63];
  }
  return out;
}

function fromBase64url(text: string): Uint8Array {
  const out: number[] = [];
  let n = 0;
  let bits = 0;
  for (const ch of text) {
    n = ((n << 6) | B64.indexOf(ch)) & 0x3fff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((n >> bits) & 255);
    }
  }
  return Uint8Array.from(out);
}
