import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** What a signed URL grants; short field names keep URLs short. */
export interface SignedGrant {
  /** Workspace id: a multi-workspace cell routes the URL to this workspace's engine. */
  w?: string;
  /** Primitive id. */
  p: string;
  /** Group id at signing time: moving the store invalidates the URL. */
  g: string;
  /** Object key. */
  k: string;
  m: "GET" | "PUT";
  /** Expiry, ms since epoch. */
  e: number;
  /** The store's signing epoch; revoke bumps it. */
  v: number;
  /** PUT: required Content-Type. */
  ct?: string;
  /** PUT: largest body. */
  ms?: number;
  /** PUT: create-only. */
  inm?: true;
  /** Successful uses allowed, counted in the store under the token's hash (`signedUseId`). */
  mu?: number;
  /** A random nonce in a token with `mu`: two URLs signed alike still count their uses apart. */
  n?: string;
}

/** The id a token's uses are counted under: sha256 of the whole token, hex. */
export function signedUseId(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Signs and verifies signed-URL tokens: base64url(JSON grant) "." base64url(HMAC-SHA256). */
export class UrlSigner {
  constructor(private readonly key: Buffer) {}

  sign(grant: SignedGrant): string {
    const payload = Buffer.from(JSON.stringify(grant)).toString("base64url");
    return `${payload}.${this.mac(payload).toString("base64url")}`;
  }

  /** The grant if the signature holds; null for anything malformed or forged. */
  verify(token: string): SignedGrant | null {
    const dot = token.indexOf(".");
    if (dot <= 0 || dot !== token.lastIndexOf(".")) return null;
    const payload = token.slice(0, dot);
    // Compare the signature's text, not its decoded bytes: base64url decoding ignores the
    // unused low bits of the last character, so several texts decode to the same bytes.
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.mac(payload).toString("base64url"));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const grant = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as SignedGrant;
      return typeof grant.p === "string" && typeof grant.k === "string" ? grant : null;
    } catch {
      return null;
    }
  }

  /**
   * The workspace a token names, read without checking its signature (to route it to an
   * engine, which then verifies it); null when the token is not a token at all (malformed).
   */
  static peekWorkspace(token: string): string | null {
    const dot = token.indexOf(".");
    if (dot <= 0 || dot !== token.lastIndexOf(".") || dot === token.length - 1) return null;
    try {
      const grant = JSON.parse(Buffer.from(token.slice(0, dot), "base64url").toString("utf8")) as Partial<SignedGrant>;
      return typeof grant.w === "string" && grant.w !== "" ? grant.w : null;
    } catch {
      return null;
    }
  }

  private mac(payload: string): Buffer {
    return createHmac("sha256", this.key).update(payload).digest();
  }
}
