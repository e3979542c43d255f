import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { ServiceError } from "@prim/wire";
import { context, seal, unseal } from "./cipher.js";

/**
 * A workspace's transfer key: an X25519 key pair derived from the master key and the workspace
 * id, so each workspace has its own (an archive sealed for workspace B opens only in B), every
 * cell of one deployment (they share `PRIM_MASTER_KEY`) derives the same one for a workspace (a
 * moved or rebuilt workspace keeps its key with nothing to carry), and a local engine's survives
 * restarts. A group archive's vault values are sealed under a fresh archive key, and that key
 * is wrapped for one recipient's transfer key: only the workspace whose key holds its private
 * half can import the values; nobody in between (the CLI, a disk, a proxy) can read them.
 */
export interface TransferKey {
  /** The public half, raw 32 bytes in base64url (43 characters): what an exporter names. */
  publicKey: string;
  privateKey: KeyObject;
}

/** An archive key wrapped for a recipient (ECDH with a one-time key, HKDF-SHA256, AES-256-GCM). */
export interface WrappedArchiveKey {
  alg: "X25519-HKDF-SHA256-A256GCM";
  recipient: string;
  ephemeral: string;
  iv: string;
  tag: string;
  wrapped: string;
}

const PKCS8_X25519_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");
const ALG = "X25519-HKDF-SHA256-A256GCM";

const publicRaw = (key: KeyObject): string => (key.export({ format: "jwk" }) as { x: string }).x;

/**
 * The transfer key of `workspaceId` under a master key (HKDF-SHA256 with the workspace id as
 * salt and its own label: no other key is reused, and no workspace's key tells anything of
 * another's).
 */
export function transferKeyFor(master: Buffer, workspaceId: string): TransferKey {
  if (workspaceId.length === 0) throw new Error("a transfer key needs a workspace id");
  const salt = Buffer.from(workspaceId, "utf8");
  const seed = Buffer.from(hkdfSync("sha256", master, salt, "prim.transfer-key.v2", 32));
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_X25519_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  seed.fill(0);
  return { publicKey: publicRaw(createPublicKey(privateKey)), privateKey };
}

/** A recipient's public key from its base64url text; 400 `invalid_request` when it is not one. */
export function parseRecipient(text: string): KeyObject {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) {
    throw new ServiceError("invalid_request", "recipient: expected an X25519 public key (43 base64url characters)");
  }
  return createPublicKey({ key: { kty: "OKP", crv: "X25519", x: text }, format: "jwk" });
}

function wrappingKey(shared: Buffer, ephemeral: string, recipient: string): Buffer {
  return Buffer.from(hkdfSync("sha256", shared, Buffer.from(`${ephemeral}.${recipient}`), "prim.archive-key.v1", 32));
}

/** Wraps `archiveKey` so that only the holder of `recipient`'s private key can unwrap it. */
export function wrapArchiveKey(archiveKey: Buffer, recipient: string): WrappedArchiveKey {
  const publicKey = parseRecipient(recipient);
  const pair = generateKeyPairSync("x25519");
  const ephemeral = publicRaw(pair.publicKey);
  const key = wrappingKey(diffieHellman({ privateKey: pair.privateKey, publicKey }), ephemeral, recipient);
  const sealed = seal(key, archiveKey, context(ALG, ephemeral, recipient));
  return {
    alg: ALG,
    recipient,
    ephemeral,
    iv: sealed.iv.toString("base64"),
    tag: sealed.tag.toString("base64"),
    wrapped: sealed.ciphertext.toString("base64"),
  };
}

/**
 * The archive key, unwrapped with this workspace's transfer key. An archive sealed for another
 * workspace is refused with 400 naming both keys (nothing in it can be read here).
 */
export function unwrapArchiveKey(wrapped: WrappedArchiveKey, own: TransferKey): Buffer {
  if (wrapped.recipient !== own.publicKey) {
    throw new ServiceError(
      "invalid_request",
      `the archive's vault secrets are sealed for transfer key ${wrapped.recipient}, not this workspace's (${own.publicKey}); export again with recipient=${own.publicKey}`,
    );
  }
  const key = wrappingKey(
    diffieHellman({ privateKey: own.privateKey, publicKey: parseRecipient(wrapped.ephemeral) }),
    wrapped.ephemeral,
    wrapped.recipient,
  );
  const plain = unseal(
    key,
    {
      iv: Buffer.from(wrapped.iv, "base64"),
      tag: Buffer.from(wrapped.tag, "base64"),
      ciphertext: Buffer.from(wrapped.wrapped, "base64"),
    },
    context(ALG, wrapped.ephemeral, wrapped.recipient),
  );
  if (plain === null || plain.length !== 32) {
    throw new ServiceError("invalid_request", "the archive's vault key does not unwrap (the archive is corrupt)");
  }
  return plain;
}

/** A fresh 256-bit archive key. */
export const newArchiveKey = (): Buffer => randomBytes(32);
