import { credentialTag, keyStart } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { base58, hashKey, isBase58, looksLikeApiKey, newApiKey } from "../src/index.js";

const WORKSPACE = "ws_01jz8x4k2m5n6p7q8r9s0t1v2w";
const TAG = "01jz8x4k2m5n6p7q8r9s0t1v2w";

describe("API keys", () => {
  it("are pk_<workspace tag>_ + base58 of 24 random bytes; only their sha256 and a display start are kept", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = newApiKey(WORKSPACE);
      expect(k.key).toMatch(new RegExp(`^pk_${TAG}_[1-9A-HJ-NP-Za-km-z]{30,34}$`));
      expect(credentialTag(k.key)).toBe(TAG);
      expect(looksLikeApiKey(k.key)).toBe(true);
      expect(k.hash).toBe(hashKey(k.key));
      expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
      // The tag is every key's of the workspace: the start is `pk_` and the secret's first 5.
      expect(k.start).toBe(`pk_${k.key.slice(30, 35)}`);
      expect(k.start).toBe(keyStart(k.key));
      expect(k.id).toMatch(/^key_[0-9a-z]{26}$/);
      seen.add(k.key);
    }
    expect(seen.size).toBe(200);
  });

  it("of a workspace id without a tag, and keys made before tags, are pk_ + base58 alone (still keys)", () => {
    const k = newApiKey("local");
    expect(k.key).toMatch(/^pk_[1-9A-HJ-NP-Za-km-z]{30,34}$/);
    expect(k.start).toBe(k.key.slice(0, 8));
    expect(credentialTag(k.key)).toBeNull();
    expect(looksLikeApiKey(k.key)).toBe(true);
  });

  it("encode base58 as Bitcoin does (leading zero bytes as 1s)", () => {
    expect(base58(Buffer.from("hello world"))).toBe("StV1DL6CwTryKyV");
    expect(base58(Buffer.from([0, 0, 1]))).toBe("112");
    expect(isBase58("0OIl")).toBe(false);
  });

  it("refuse shapes that are not keys before any lookup", () => {
    for (const bad of [
      "",
      "pk_",
      "pk_short",
      `po_${"a".repeat(32)}`,
      `pk_${"0".repeat(32)}`,
      `pk_${"a".repeat(40)}`,
      `pk_${TAG}_`,
      `pk_${TAG.toUpperCase()}_${"a".repeat(32)}`,
      `pk_${TAG}x_${"a".repeat(32)}`,
      `pk_${TAG}_${"a".repeat(31)}_`,
    ]) {
      expect(looksLikeApiKey(bad)).toBe(false);
    }
  });
});
