/**
 * Webhook signatures in the Standard Webhooks format (https://www.standardwebhooks.com): every
 * delivery carries `webhook-id` (the same on every retry: the receiver's idempotency key),
 * `webhook-timestamp` (seconds, fresh on each attempt) and `webhook-signature`, a space-separated
 * list of `v1,<base64 HMAC-SHA256>` over `${id}.${timestamp}.${body}` keyed by the endpoint's
 * secret, `whsec_<base64 of its bytes>`. Any Standard Webhooks library verifies what Prim sends;
 * `verifyWebhook` here is one for receivers written with the SDK. WebCrypto only, so it runs in
 * Node, browsers and workers alike.
 */

const encoder = new TextEncoder();

/** A signing secret's bytes (24 random bytes, as the reference libraries make them). */
const SECRET_BYTES = 24;
/** How far a delivery's timestamp may be from the receiver's clock (the reference default). */
export const WEBHOOK_TOLERANCE_S = 5 * 60;

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** A new endpoint secret, `whsec_…`. */
export function newWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)))}`;
}

/** The key of a `whsec_` secret (the prefix is optional, as in the reference libraries), or null. */
function secretKey(secret: string): Uint8Array | null {
  const bytes = fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  return bytes === null || bytes.length === 0 ? null : bytes;
}

async function hmac(key: Uint8Array, text: string): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, encoder.encode(text)));
}

/** `v1,<signature>` of one delivery attempt. */
export async function signWebhook(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = secretKey(secret);
  if (key === null) throw new Error("a webhook secret is whsec_ followed by base64");
  return `v1,${toBase64(await hmac(key, `${id}.${timestamp}.${body}`))}`;
}

/** The three headers of a delivery attempt made at `now` (ms). */
export async function webhookHeaders(
  secret: string,
  id: string,
  body: string,
  now: number,
): Promise<Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>> {
  const timestamp = Math.floor(now / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signWebhook(secret, id, timestamp, body),
  };
}

/** Equal without a timing difference on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Whether a received delivery is genuine: one of its `v1` signatures matches under `secret`, and
 * its timestamp is within `toleranceS` of `now` (ms). `headers` by lower-case name; `body` the raw
 * text as received (a re-serialised JSON would not match).
 */
export async function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  now = Date.now(),
  toleranceS = WEBHOOK_TOLERANCE_S,
): Promise<boolean> {
  const one = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = one("webhook-id");
  const timestamp = one("webhook-timestamp");
  const signatures = one("webhook-signature");
  if (id === undefined || timestamp === undefined || signatures === undefined) return false;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceS) return false;
  if (secretKey(secret) === null) return false;
  const expected = await signWebhook(secret, id, Number(timestamp), body);
  return signatures.split(" ").some((candidate) => sameText(candidate, expected));
}
