// Offline attenuation (src/attenuation.ts): fixed vectors, checked against an independent
// computation with node:crypto, and every way of tampering with a chain refused.
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  attenuate,
  type Caveat,
  credentialTag,
  encodeCaveat,
  parseAttenuated,
  parseCaveat,
  verifyAttenuated,
} from "../src/index.js";

const KEY = `pk_${"2".repeat(32)}`;
const HASH = createHash("sha256").update(KEY).digest("hex");
const FIRST: Caveat[] = [
  { type: "group", group: "app" },
  { type: "tools", tools: ["kv_get", "kv_list"] },
];
const MORE: Caveat[] = [
  { type: "read_only" },
  { type: "expires", at: 1800000000000 },
  { type: "ip", cidrs: ["10.0.0.0/8", "::1"] },
];
const T1 =
  "pa_19d308b1e62d4c9601e550aebcf16dbf.Z3JvdXA9YXBw.dG9vbHM9a3ZfZ2V0LGt2X2xpc3Q.xoGUC8hUYRL3at9VSHyeZvmvEFMrXXpnlQKHdCj3Lrk";
const T2 =
  "pa_19d308b1e62d4c9601e550aebcf16dbf.Z3JvdXA9YXBw.dG9vbHM9a3ZfZ2V0LGt2X2xpc3Q.cmVhZF9vbmx5.ZXhwaXJlcz0xODAwMDAwMDAwMDAw.aXA9MTAuMC4wLjAvOCw6OjE.vlEggSugpVqf3dP0nDM2KY7O8NfY7F92XLviq8qgVFQ";

const verify = (token: string, hash = HASH) => {
  const parts = parseAttenuated(token);
  return parts === null ? Promise.resolve(null) : verifyAttenuated(parts, hash);
};

describe("attenuation vectors", () => {
  it("a key narrowed by fixed caveats gives fixed tokens, and narrowing a token continues its chain", async () => {
    expect(await attenuate(KEY, FIRST)).toBe(T1);
    expect(await attenuate(T1, MORE)).toBe(T2);
    expect(await attenuate(KEY, [...FIRST, ...MORE])).toBe(T2);
  });

  it("is HMAC-SHA256 keyed by sha256(key), as an independent computation finds", () => {
    const root = createHash("sha256").update(KEY).digest();
    const id = root.toString("hex").slice(0, 32);
    let sig = createHmac("sha256", root).update(`prim-attenuate-v1:${id}`).digest();
    for (const c of [...FIRST, ...MORE]) sig = createHmac("sha256", sig).update(encodeCaveat(c)).digest();
    expect(T2).toBe(
      `pa_${id}.${["group=app", "tools=kv_get,kv_list", "read_only", "expires=1800000000000", "ip=10.0.0.0/8,::1"]
        .map((t) => Buffer.from(t).toString("base64url"))
        .join(".")}.${sig.toString("base64url")}`,
    );
  });

  it("verifies against the stored hash and yields the caveats in order", async () => {
    expect(await verify(T2)).toEqual([...FIRST, ...MORE]);
  });

  it("carries a tagged key's workspace tag, outside the chain, through every narrowing", async () => {
    const tag = "01jz8x4k2m5n6p7q8r9s0t1v2w";
    const key = `pk_${tag}_${"2".repeat(32)}`;
    const hash = createHash("sha256").update(key).digest("hex");
    const once = await attenuate(key, FIRST);
    expect(once.startsWith(`pa_${tag}_${hash.slice(0, 32)}.`)).toBe(true);
    expect(credentialTag(once)).toBe(tag);
    const twice = await attenuate(once, MORE);
    expect(parseAttenuated(twice)?.tag).toBe(tag);
    expect(await verify(twice, hash)).toEqual([...FIRST, ...MORE]);
    // The same chain without the tag verifies too (the server checks a tag, it does not need one).
    expect(await verify(twice.replace(`pa_${tag}_`, "pa_"), hash)).toEqual([...FIRST, ...MORE]);
    expect(parseAttenuated(T2)?.tag).toBeNull();
  });
});

describe("a chain cannot be tampered with", () => {
  const parts = () => T2.split(".");
  it("refuses a changed caveat", async () => {
    const p = parts();
    p[2] = Buffer.from("tools=kv_*").toString("base64url");
    expect(await verify(p.join("."))).toBeNull();
  });

  it("refuses reordered caveats", async () => {
    const p = parts();
    [p[1], p[2]] = [p[2] as string, p[1] as string];
    expect(await verify(p.join("."))).toBeNull();
  });

  it("refuses a dropped caveat, first, middle or last", async () => {
    for (const i of [1, 3, 5]) {
      const p = parts();
      p.splice(i, 1);
      expect(await verify(p.join("."))).toBeNull();
    }
  });

  it("refuses a changed signature, another key's hash and a mismatched id", async () => {
    const p = parts();
    p[p.length - 1] = `A${(p.at(-1) as string).slice(1)}`;
    expect(await verify(p.join("."))).toBeNull();
    const other = createHash("sha256")
      .update(`pk_${"3".repeat(32)}`)
      .digest("hex");
    expect(await verify(T2, other)).toBeNull();
    expect(await verify(T2, `${HASH.slice(0, 32)}${"0".repeat(32)}`)).toBeNull();
  });

  it("refuses another spelling of the same signature (its last character's unused bits changed)", async () => {
    const p = parts();
    const sig = p[p.length - 1] as string;
    // 32 bytes are 43 base64url characters: the last one carries 4 bits and 2 unused ones.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(sig.at(-1) as string);
    p[p.length - 1] = sig.slice(0, -1) + alphabet[last ^ 1];
    expect(Buffer.from(p[p.length - 1] as string, "base64url")).toEqual(Buffer.from(sig, "base64url"));
    expect(parseAttenuated(p.join("."))).toBeNull();
    expect(await verify(T2)).not.toBeNull();
  });

  it("refuses malformed tokens by shape", () => {
    for (const bad of [
      "pa_",
      `pa_${"0".repeat(32)}`,
      `pa_${"0".repeat(32)}.AA`,
      `pa_XYZ.${T2.split(".").slice(1).join(".")}`,
      `pa_01jz8x4k2m5n6p7q8r9s0t1v2w_XYZ.${T2.split(".").slice(1).join(".")}`,
    ]) {
      expect(parseAttenuated(bad)).toBeNull();
    }
  });
});

describe("caveats", () => {
  it("have one canonical text each; anything else is refused", () => {
    for (const c of [...FIRST, ...MORE]) expect(parseCaveat(encodeCaveat(c))).toEqual(c);
    for (const bad of [
      "group=",
      "tools=",
      "tools=KV_GET",
      "expires=soon",
      "expires=01",
      "ip=",
      "ip=here",
      "admin",
      "read_only=1",
    ]) {
      expect(() => parseCaveat(bad)).toThrow();
    }
  });

  it("attenuate refuses no caveats and a credential that is neither pk_ nor pa_", async () => {
    await expect(attenuate(KEY, [])).rejects.toThrow(/at least one caveat/);
    await expect(attenuate("po_abc", [{ type: "read_only" }])).rejects.toThrow(/neither/);
  });
});
