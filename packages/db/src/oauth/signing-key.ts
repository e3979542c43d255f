import { createHmac, generateKeyPairSync } from "node:crypto";
import { seal, sealingContext, unseal } from "@prim/engine";
import type pg from "pg";

/** The one signing key's id (the row's `id_hash` under model `SigningKey`). */
const KID = "prim-1";

/** The row's payload once wrapped: AES-256-GCM of the JWK's JSON, base64url. */
interface WrappedJwk {
  wrapped: "aes-256-gcm";
  iv: string;
  tag: string;
  ciphertext: string;
}

type Jwk = Record<string, unknown>;

/** Its own key, derived from the master key (the vault's data keys use the master key itself). */
const wrappingKey = (masterKey: Buffer) => createHmac("sha256", masterKey).update("prim.oauth-signing-key.v1").digest();

/** The wrapping is bound to its purpose and key id: another row's ciphertext does not pass for it. */
const AAD = sealingContext("prim oauth signing key", KID);

const b64 = (bytes: Buffer) => bytes.toString("base64url");

function wrap(masterKey: Buffer, jwk: Jwk): WrappedJwk {
  const sealed = seal(wrappingKey(masterKey), Buffer.from(JSON.stringify(jwk)), AAD);
  return { wrapped: "aes-256-gcm", iv: b64(sealed.iv), tag: b64(sealed.tag), ciphertext: b64(sealed.ciphertext) };
}

function unwrap(masterKey: Buffer, payload: WrappedJwk): Jwk {
  const plain = unseal(
    wrappingKey(masterKey),
    {
      iv: Buffer.from(payload.iv, "base64url"),
      tag: Buffer.from(payload.tag, "base64url"),
      ciphertext: Buffer.from(payload.ciphertext, "base64url"),
    },
    AAD,
  );
  if (plain === null) {
    throw new Error(
      "the OAuth signing key in Postgres (oauth_store, SigningKey) does not unwrap with this master key: " +
        "every process must share the PRIM_MASTER_KEY that wrapped it",
    );
  }
  return JSON.parse(plain.toString("utf8")) as Jwk;
}

/**
 * The authorization server's signing key (an RS256 JWK with its private part), shared by every
 * process through Postgres and kept there wrapped with the master key: made by the first process,
 * wrapped in place when an earlier version left it in the clear (the same key, so tokens it
 * signed stay valid). A master key that does not unwrap it throws: a process must not start and
 * sign with a key the others do not publish.
 */
export async function oauthSigningKey(pool: pg.Pool, masterKey: Buffer): Promise<Jwk> {
  const read = async () =>
    (
      await pool.query<{ payload: Jwk | WrappedJwk }>(
        "SELECT payload FROM oauth_store WHERE model = 'SigningKey' AND id_hash = $1",
        [KID],
      )
    ).rows[0]?.payload;
  let stored = await read();
  if (stored === undefined) {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const jwk = { ...privateKey.export({ format: "jwk" }), kid: KID, alg: "RS256", use: "sig" };
    // Two processes starting at once: the first insert wins and both use it.
    await pool.query(
      "INSERT INTO oauth_store (model, id_hash, payload) VALUES ('SigningKey', $1, $2) ON CONFLICT DO NOTHING",
      [KID, JSON.stringify(wrap(masterKey, jwk))],
    );
    stored = (await read()) as WrappedJwk;
  }
  if ("wrapped" in stored) return unwrap(masterKey, stored as WrappedJwk);
  // In the clear (before wrapping): wrapped now, unless another process did it first.
  await pool.query(
    "UPDATE oauth_store SET payload = $2 WHERE model = 'SigningKey' AND id_hash = $1 AND payload ? 'd'",
    [KID, JSON.stringify(wrap(masterKey, stored))],
  );
  // Read back: a process with another master key that wrapped it first is found out here.
  return unwrap(masterKey, (await read()) as WrappedJwk);
}
