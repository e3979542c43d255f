import { describe, expect, it } from "vitest";
import { addressAllowed, classifyAddress, parseIPv6 } from "../../src/primitives/vault/address.js";
import { hostAllowed, normalizeHostPattern } from "../../src/primitives/vault/hosts.js";
import { Redactor } from "../../src/primitives/vault/redact.js";

describe("vault: destination addresses", () => {
  it("allows public unicast addresses only", () => {
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "2606:4700::1111",
      "[2a00:1450:4001::200e]",
      "64:ff9b::808:808",
    ]) {
      expect(classifyAddress(address).kind, address).toBe("public");
    }
  });

  it("blocks every private, loopback, link-local, reserved and special range", () => {
    const blocked = [
      "0.0.0.0",
      "0.1.2.3",
      "10.0.0.1",
      "10.255.255.255",
      "100.64.0.1",
      "100.127.255.255",
      "127.0.0.1",
      "127.255.255.254",
      "169.254.169.254",
      "172.16.0.1",
      "172.31.255.255",
      "192.0.0.1",
      "192.0.2.1",
      "192.168.0.1",
      "198.18.0.1",
      "198.51.100.1",
      "203.0.113.1",
      "224.0.0.1",
      "239.255.255.255",
      "240.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:10.0.0.1",
      "::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "2002:0a00:0001::1",
      "2002:7f00:1::",
      "2001::1",
      "2001:db8::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "fe80::1%eth0",
      "fec0::1",
      "ff02::1",
      "100::1",
      "not-an-ip",
    ];
    for (const address of blocked) {
      expect(addressAllowed(address, false), address).toBe(false);
    }
    for (const address of ["100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "2002:0808:0808::1"]) {
      expect(addressAllowed(address, false), address).toBe(true);
    }
  });

  it("lets the loopback option through loopback alone", () => {
    for (const address of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"]) {
      expect(addressAllowed(address, true), address).toBe(true);
    }
    for (const address of ["10.0.0.1", "169.254.169.254", "0.0.0.0", "::", "fe80::1", "192.168.1.1"]) {
      expect(addressAllowed(address, true), address).toBe(false);
    }
  });

  it("parses IPv6 in every spelling", () => {
    expect(parseIPv6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("[::ffff:1.2.3.4]")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    expect(parseIPv6("2001:db8::")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6("1.2.3.4")).toBeNull();
    expect(parseIPv6("1::2::3")).toBeNull();
  });
});

describe("vault: grant host patterns", () => {
  const allows = (patterns: string[], url: string) => {
    const normalized = patterns.map((p) => {
      const result = normalizeHostPattern(p);
      if ("error" in result) throw new Error(result.error);
      return result.pattern;
    });
    return hostAllowed(normalized, new URL(url));
  };

  it("matches exact hosts on any port unless the pattern names one", () => {
    expect(allows(["api.example.com"], "https://api.example.com/v1")).toBe(true);
    expect(allows(["api.example.com"], "http://API.EXAMPLE.COM.:8080/")).toBe(true);
    expect(allows(["api.example.com"], "https://example.com/")).toBe(false);
    expect(allows(["api.example.com:443"], "https://api.example.com/")).toBe(true);
    expect(allows(["api.example.com:443"], "http://api.example.com/")).toBe(false);
    expect(allows(["api.example.com:80"], "http://api.example.com/")).toBe(true);
    expect(allows(["[::1]:8080"], "http://[::1]:8080/")).toBe(true);
    expect(allows(["127.0.0.1"], "http://2130706433/")).toBe(true);
  });

  it("matches '*.' patterns on subdomains at any depth, never the apex, look-alikes or addresses", () => {
    expect(allows(["*.example.com"], "https://a.example.com/")).toBe(true);
    expect(allows(["*.example.com"], "https://a.b.example.com/")).toBe(true);
    expect(allows(["*.example.com"], "https://example.com/")).toBe(false);
    expect(allows(["*.example.com"], "https://badexample.com/")).toBe(false);
    expect(allows(["*.example.com"], "https://example.com.evil.test/")).toBe(false);
    expect(allows(["*.example.com:8443"], "https://a.example.com:8443/")).toBe(true);
    expect(allows(["*.example.com:8443"], "https://a.example.com/")).toBe(false);
  });
});

describe("vault: redaction", () => {
  it("replaces the value and its encodings, at any base64 alignment", () => {
    const value = 's3cr3t/Value+With=Symbols"é';
    const r = new Redactor(value, "K");
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    for (const prefix of ["", "a", "ab", "abc"]) {
      const encoded = b64(`${prefix}${value}tail`);
      expect(r.text(encoded), prefix).toContain("[REDACTED:K]");
    }
    expect(r.text(`x${encodeURIComponent(value)}y`)).toBe("x[REDACTED:K]y");
    expect(r.text(JSON.stringify({ v: value }))).toBe('{"v":"[REDACTED:K]"}');
    expect(r.text(JSON.stringify(JSON.stringify({ v: value })))).not.toContain("s3cr3t");
    expect(r.text(Buffer.from(value).toString("hex"))).toBe("[REDACTED:K]");
    expect(r.header(Buffer.from(value).toString("latin1"))).toBe("[REDACTED:K]");
  });

  it("keeps short derived forms from matching unrelated text", () => {
    const r = new Redactor("ab", "K");
    // base64("ab") is "YWI=": too short to redact on its own; the raw value still is.
    expect(r.text("YWI= and ab")).toBe("YWI= and [REDACTED:K]");
  });
});
