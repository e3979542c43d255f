import { BlockList, isIP } from "node:net";
import { invalid, type KeyBudget, ServiceError } from "@prim/engine";
import { budgetOfText } from "@prim/wire";

/**
 * A key's limits besides its scope (keys for agents, issue 41): when it expires, the client
 * addresses it may be used from (`ip_allow`, CIDRs, IPv4 and IPv6, matched with node's own
 * `BlockList`) and its operation budget. Parsed and checked here once, for the admin command,
 * the dashboard and the resolver alike.
 */

/** The most CIDRs one key may carry (a list this long is a configuration error, not a policy). */
const MAX_CIDRS = 64;
/** The largest budget (keeps the Redis counter an exact integer in Lua's doubles). */
const MAX_BUDGET = 1e12;

/** `10.0.0.0/8`, `::1/128`, or a bare address (its own /32 or /128), else 400 `invalid_request`. */
export function parseCidr(text: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } {
  const trimmed = text.trim();
  const slash = trimmed.indexOf("/");
  const address = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const version = isIP(address);
  if (version === 0) throw invalid(`ip_allow: '${text}' is not an IPv4 or IPv6 address or CIDR`);
  const max = version === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(max) : trimmed.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > max) {
    throw invalid(`ip_allow: '${text}' has a prefix length outside 0..${max}`);
  }
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** A list of CIDRs as stored (each checked; empty and over-long lists refused), or 400. */
export function checkIpAllow(list: readonly string[]): string[] {
  if (list.length === 0) throw invalid("ip_allow: name at least one CIDR (omit it for any address)");
  if (list.length > MAX_CIDRS) throw invalid(`ip_allow: at most ${MAX_CIDRS} CIDRs`);
  return list.map((cidr) => {
    const { address, prefix } = parseCidr(cidr);
    return `${address}/${prefix}`;
  });
}

/** `"10.0.0.0/8, ::1/128"` (the CLI's and the dashboard's form) as a checked list. */
export function parseIpAllow(text: string): string[] {
  return checkIpAllow(
    text
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part !== ""),
  );
}

/** The allowlist as a matcher: whether a client address falls in one of its CIDRs. */
export function ipMatcher(list: readonly string[]): (ip: string) => boolean {
  const blocks = new BlockList();
  for (const cidr of list) {
    const { address, prefix, family } = parseCidr(cidr);
    blocks.addSubnet(address, prefix, family);
  }
  return (ip) => {
    const version = isIP(ip);
    if (version === 0) return false;
    if (blocks.check(ip, version === 4 ? "ipv4" : "ipv6")) return true;
    // A dual-stack socket reports an IPv4 client as `::ffff:a.b.c.d`: its IPv4 form counts too.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
    return mapped !== undefined && blocks.check(mapped, "ipv4");
  };
}

/** A budget as stored: a positive integer total, or a limit per UTC day or month; else 400. */
export function checkBudget(budget: KeyBudget): KeyBudget {
  const n = "total" in budget ? budget.total : budget.limit;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_BUDGET) {
    throw invalid(`budget: the number of operations must be a whole number from 1 to ${MAX_BUDGET}`);
  }
  if ("total" in budget) return { total: n };
  if (budget.per !== "day" && budget.per !== "month") throw invalid("budget: per must be day or month");
  return { per: budget.per, limit: n };
}

/** `1000` (a total) or `1000/day`, `1000/month` (the CLI's and the dashboard's form), or 400. */
export function parseBudget(text: string): KeyBudget {
  const budget = budgetOfText(text);
  if (budget === undefined) throw invalid(`budget: '${text}' is not N, N/day or N/month`);
  return checkBudget(budget);
}

/** An expiry (ms since the epoch) that is still ahead of `now`, else 400. */
export function checkExpiry(expiresAt: number, now = Date.now()): number {
  if (!Number.isSafeInteger(expiresAt)) throw invalid("expires_at: milliseconds since the epoch");
  if (expiresAt <= now) throw invalid("expires_at: the time has already passed");
  return expiresAt;
}

/** `30m`, `1h`, `7d` (or a bare number of seconds) as milliseconds, for `--expires-in`; else 400. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) throw invalid(`'${text}' is not a duration such as 30m, 1h or 7d`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? "s"] ?? 1000;
  const ms = Number(match[1]) * unit;
  if (ms <= 0 || !Number.isSafeInteger(ms)) throw invalid(`'${text}' is not a positive duration`);
  return ms;
}

/**
 * Whether every CIDR of `child` lies inside one CIDR of `parent` (same family, a prefix at least
 * as long, its network address within the parent's block): a minted key's allowlist may only
 * shrink its parent's.
 */
export function ipAllowWithin(parent: readonly string[], child: readonly string[]): boolean {
  const blocks = parent.map((cidr) => {
    const { address, prefix, family } = parseCidr(cidr);
    const list = new BlockList();
    list.addSubnet(address, prefix, family);
    return { list, prefix, family };
  });
  return child.every((cidr) => {
    const { address, prefix, family } = parseCidr(cidr);
    return blocks.some((b) => b.family === family && prefix >= b.prefix && b.list.check(address, family));
  });
}

/** One answer for every bad credential, so a caller learns nothing from which it was. */
export const invalidToken = (message = "the credential is missing, malformed, unknown or revoked") =>
  new ServiceError("invalid_token", message, { headers: { "WWW-Authenticate": 'Bearer realm="prim"' } });

/** A key's expiry and IP allowlist as checked on every request (cached with its principal). */
export interface KeyAdmission {
  /** Ms since the epoch, or null: checked on every hit, so a cached key stops at its expiry. */
  expiresAt: number | null;
  /** The key's IP allowlist as a matcher, or null for any address. */
  allows: ((ip: string) => boolean) | null;
}

/** A key row's expiry and allowlist, ready for `admitKey`. */
export function keyAdmission(row: { expires_at: Date | null; ip_allow: string[] | null }): KeyAdmission {
  return {
    expiresAt: row.expires_at?.getTime() ?? null,
    allows: row.ip_allow === null ? null : ipMatcher(row.ip_allow),
  };
}

/**
 * An expired key answers as a revoked one would (401), then the client address is checked
 * against the key's allowlist (403: the key is good, the place is not). The same for the key
 * itself and for every `pa_` token made from it.
 */
export function admitKey(key: KeyAdmission, now: number, clientIp: string | undefined): void {
  if (key.expiresAt !== null && key.expiresAt <= now) {
    throw invalidToken(`the key expired at ${new Date(key.expiresAt).toISOString()}`);
  }
  if (key.allows !== null && (clientIp === undefined || !key.allows(clientIp))) {
    throw new ServiceError(
      "forbidden",
      `the client address ${clientIp ?? "(unknown)"} is outside this key's IP allowlist (ip_allow)`,
    );
  }
}
