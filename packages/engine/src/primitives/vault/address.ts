import { isIP } from "node:net";

/**
 * Where an address points, for fetch's SSRF rule: only public unicast addresses are reachable;
 * `loopback` is reachable only with the engine's test-only `allowLoopbackFetch`.
 */
export type AddressKind = "public" | "loopback" | "blocked";

export interface AddressClass {
  kind: AddressKind;
  /** Why it is not public (for the error message): `private`, `link-local`, … */
  reason: string;
}

const PUBLIC: AddressClass = { kind: "public", reason: "public" };

/** IPv4 ranges that are not the public internet (RFC 6890 special-purpose registry). */
const IPV4_RANGES: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved or broadcast"],
];

function parseIPv4(text: string): number | null {
  if (isIP(text) !== 4) return null;
  return text.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

const V4_TABLE = IPV4_RANGES.map(([base, bits, reason]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { network: ((parseIPv4(base) as number) & mask) >>> 0, mask, reason };
});

function classifyIPv4(value: number): AddressClass {
  for (const range of V4_TABLE) {
    if ((value & range.mask) >>> 0 === range.network) {
      return { kind: range.reason === "loopback" ? "loopback" : "blocked", reason: range.reason };
    }
  }
  return PUBLIC;
}

/** Eight 16-bit groups, or null. Accepts brackets, a zone (`%eth0`) and a dotted IPv4 tail. */
export function parseIPv6(text: string): number[] | null {
  let s = text.toLowerCase();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone !== -1) s = s.slice(0, zone);
  if (isIP(s) !== 6) return null;
  const lastColon = s.lastIndexOf(":");
  const tail = s.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseIPv4(tail);
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = s.split("::");
  const head = halves[0] === "" ? [] : (halves[0] as string).split(":");
  const rest = halves.length === 1 || halves[1] === "" ? [] : (halves[1] as string).split(":");
  const fill = halves.length === 1 ? [] : new Array<string>(8 - head.length - rest.length).fill("0");
  const groups = [...head, ...fill, ...rest].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

const embeddedV4 = (hi: number, lo: number) => hi * 65536 + lo;

function classifyIPv6(g: number[]): AddressClass {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 1) return { kind: "loopback", reason: "loopback" };
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 0) return { kind: "blocked", reason: "unspecified" };
  // ::ffff:a.b.c.d reaches the IPv4 address itself.
  if (zeroPrefix && g5 === 0xffff) return classifyIPv4(embeddedV4(g6, g7));
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach an embedded IPv4 address through a gateway.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyIPv4(embeddedV4(g6, g7)).kind === "public"
      ? PUBLIC
      : { kind: "blocked", reason: "NAT64 of a non-public IPv4" };
  }
  if (g0 === 0x2002) {
    return classifyIPv4(embeddedV4(g1, g2)).kind === "public"
      ? PUBLIC
      : { kind: "blocked", reason: "6to4 of a non-public IPv4" };
  }
  // Outside global unicast 2000::/3: ULA fc00::/7, link-local fe80::/10, multicast ff00::/8,
  // IPv4-compatible ::/96, discard 100::/64 and the rest of the unassigned space.
  if (g0 < 0x2000 || g0 > 0x3fff)
    return { kind: "blocked", reason: "not global unicast (private, link-local or multicast)" };
  // 2001::/23 (IETF protocol: Teredo, ORCHID), 2001:db8::/32 and 3fff::/20 (documentation).
  if (g0 === 0x2001 && (g1 < 0x200 || g1 === 0xdb8)) return { kind: "blocked", reason: "IETF special-purpose" };
  if (g0 === 0x3fff && g1 < 0x1000) return { kind: "blocked", reason: "documentation" };
  return PUBLIC;
}

/** Classifies an IP address (IPv4 dotted, IPv6 with or without brackets). Unparseable: blocked. */
export function classifyAddress(address: string): AddressClass {
  const v4 = parseIPv4(address);
  if (v4 !== null) return classifyIPv4(v4);
  const v6 = parseIPv6(address);
  if (v6 !== null) return classifyIPv6(v6);
  return { kind: "blocked", reason: "not an IP address" };
}

/** Whether fetch may connect to `address`. */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  const { kind } = classifyAddress(address);
  return kind === "public" || (kind === "loopback" && allowLoopback);
}
