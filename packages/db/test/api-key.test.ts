import { describe, expect, it } from "vitest";
import { base58, hashKey, isBase58, looksLikeApiKey, newApiKey } from "../src/index.js";

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
