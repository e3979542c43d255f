import { describe, expect, it } from "vitest";
import { base58, hashKey, isBase58, looksLikeApiKey, newApiKey, readApiEnv } from "../src/index.js";

describe("API keys", () => {
  it("are pk_ + base58 of 24 random bytes; only their sha256 and first 8 characters are kept", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = newApiKey();
      expect(k.key).toMatch(/^pk_[1-9A-HJ-NP-Za-km-z]{30,34}$/);
      expect(looksLikeApiKey(k.key)).toBe(true);
      expect(k.hash).toBe(hashKey(k.key));
      expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(k.start).toBe(k.key.slice(0, 8));
      expect(k.id).toMatch(/^key_[0-9a-z]{26}$/);
      seen.add(k.key);
    }
    expect(seen.size).toBe(200);
  });

  it("encode base58 as Bitcoin does (leading zero bytes as 1s)", () => {
    expect(base58(Buffer.from("hello world"))).toBe("StV1DL6CwTryKyV");
    expect(base58(Buffer.from([0, 0, 1]))).toBe("112");
    expect(isBase58("0OIl")).toBe(false);
  });

  it("refuse shapes that are not keys before any lookup", () => {
    for (const bad of ["", "pk_", "pk_short", `po_${"a".repeat(32)}`, `pk_${"0".repeat(32)}`, `pk_${"a".repeat(40)}`]) {
      expect(looksLikeApiKey(bad)).toBe(false);
    }
  });
});

describe("api configuration", () => {
  it("takes CLOUD.md's defaults", () => {
    const env = readApiEnv({});
    expect(env).toMatchObject({
      DATABASE_URL: "postgres://postgres@localhost:5432/prim",
      REDIS_URL: "redis://localhost:6379",
      PRIM_API_PORT: 8787,
      publicApiUrl: "http://localhost:8787",
    });
  });

  it("names every missing or malformed variable at once", () => {
    expect(() =>
      readApiEnv({
        DATABASE_URL: "mysql://x",
        PRIM_API_PORT: "http",
        PRIM_BLOBS: "s3",
        PRIM_MASTER_KEY: "short",
        PRIM_INTERNAL_SECRET: "tiny",
      }),
    ).toThrow(
      /invalid configuration:\n {2}DATABASE_URL: DATABASE_URL must be a postgres:\/\/ URL\n {2}PRIM_API_PORT: must be a port number \(0-65535\)\n.*PRIM_INTERNAL_SECRET.*\n.*PRIM_MASTER_KEY.*\n.*S3_BUCKET: S3_BUCKET is required when PRIM_BLOBS=s3/s,
    );
  });
});
