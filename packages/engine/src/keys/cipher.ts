import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** One AES-256-GCM ciphertext with its 96-bit nonce and 128-bit tag. */
export interface Sealed {
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts `plaintext` under `key` with a fresh random nonce. `aad` is authenticated but not
 * stored: decryption must present the same bytes, which binds the ciphertext to its context.
 */
export function seal(key: Buffer, plaintext: Buffer, aad: Buffer): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

/** Decrypts, or returns null when the key, the context or the bytes do not match. */
export function unseal(key: Buffer, sealed: Sealed, aad: Buffer): Buffer | null {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, sealed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    return null;
  }
}

/** Authenticated context as bytes: length-prefixed parts, so no two contexts share an encoding. */
export function context(...parts: (string | number)[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const bytes = Buffer.from(String(part), "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    chunks.push(length, bytes);
  }
  return Buffer.concat(chunks);
}
