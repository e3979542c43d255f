// The authorization server's signing key (an RSA JWK with its private part) is kept in Postgres
// wrapped by the master key: no private member in the clear, the same key after a restart, a
// clear key left by an earlier version wrapped on the next start (tokens stay valid), and a
// process with another master key refuses to start rather than sign with a key of its own.
import { createPublicKey, createSign, createVerify, generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiApp, readApiEnv } from "../src/index.js";

const masterKey = randomBytes(32).toString("hex");
const secret = randomBytes(24).toString("hex");
let cloud: TestCloud;

beforeAll(async () => {
  cloud = await startCloud("oauthkey", { PRIM_INTERNAL_SECRET: secret, PRIM_MASTER_KEY: masterKey });
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
});

type Jwk = Record<string, string>;

const storedKey = async () =>
  (
    await cloud.api.hub.pool.query<{ payload: string }>(
      "SELECT payload::text AS payload FROM oauth_store WHERE model = 'SigningKey'",
    )
  ).rows.map((r) => r.payload);

async function servedKeys(url: string): Promise<Jwk[]> {
  const res = await fetch(`${url}/oauth/jwks`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: Jwk[] }).keys;
}

/** No private member of an RSA JWK (`d`, the primes and CRT values) appears in the text. */
function expectNoPrivatePart(text: string): void {
  for (const member of ["d", "p", "q", "dp", "dq", "qi"]) expect(text).not.toContain(`"${member}"`);
}

describe("the OAuth signing key at rest", () => {
  it("is stored wrapped, and a restart serves the same key", async () => {
    const rows = await storedKey();
    expect(rows).toHaveLength(1);
    expectNoPrivatePart(rows[0] as string);
    const before = await servedKeys(cloud.url);
    expect(before.map((k) => k.kid)).toEqual(["prim-1"]);
    const restarted = await cloud.second();
    expect(await servedKeys(restarted.url)).toEqual(before);
    expect(await storedKey()).toEqual(rows);
  });

  it("a key stored in the clear by an earlier version is wrapped on start and stays the key served", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const clear = { ...privateKey.export({ format: "jwk" }), kid: "prim-1", alg: "RS256", use: "sig" };
    await cloud.api.hub.pool.query("UPDATE oauth_store SET payload = $1 WHERE model = 'SigningKey'", [
      JSON.stringify(clear),
    ]);
    const restarted = await cloud.second();
    const rows = await storedKey();
    expectNoPrivatePart(rows[0] as string);
    const served = (await servedKeys(restarted.url))[0] as Jwk;
    expect(served.n).toBe(clear.n);
    // What the old key signed verifies with the key the restarted server publishes.
    const signature = createSign("sha256").update("an id token").sign(privateKey);
    const publicKey = createPublicKey({ key: served, format: "jwk" });
    expect(createVerify("sha256").update("an id token").verify(publicKey, signature)).toBe(true);
  });

  it("another master key refuses to start, naming the problem", async () => {
    const dir = mkdtempSync(join(tmpdir(), "prim-oauthkey-"));
    const env = (key: string) =>
      readApiEnv({
        DATABASE_URL: cloud.databaseUrl,
        PRIM_DATA_DIR: join(dir, key.slice(0, 8)),
        // Only whether it starts is under test: it serves no request.
        PRIM_BLOBS: `local:${join(dir, "blobs")}`,
        PRIM_API_PORT: "0",
        PRIM_LIMITS: "off",
        PRIM_INTERNAL_SECRET: secret,
        PRIM_MASTER_KEY: key,
      });
    try {
      const wrong = await createApiApp(env(randomBytes(32).toString("hex"))).then(
        async (app) => {
          await app.close();
          return "started";
        },
        (err: Error) => err.message,
      );
      expect(wrong).toMatch(/OAuth signing key .* does not unwrap with this master key/);
      // The right key, the same way, starts.
      const right = await createApiApp(env(masterKey));
      await right.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
