import { isIP } from "node:net";

/**
 * Grant host patterns. An entry is a host (`api.example.com`, `203.0.113.7`, `[2001:db8::1]`)
 * or `*.` and a domain (`*.example.com`: any subdomain at any depth, never the apex itself),
 * optionally with `:port` (without one, every port of the host is allowed). Entries are kept in
 * the URL parser's canonical form (lower case, punycode, dotted IPv4), the same form request
 * URLs are compared in, so `API.Example.com.` and `api.example.com` are one host.
 */

/** The canonical host of a URL, as grants compare it: no trailing dot. */
export function canonicalHost(url: URL): string {
  return url.hostname.endsWith(".") ? url.hostname.slice(0, -1) : url.hostname;
}

/** The port a URL connects to. */
export function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Splits `host[:port]` (IPv6 in brackets); null when the port is malformed. */
function splitPort(entry: string): { host: string; port: string | null } | null {
  const close = entry.lastIndexOf("]");
  const colon = entry.lastIndexOf(":");
  if (colon === -1 || colon < close) return { host: entry, port: null };
  if (!entry.startsWith("[") && entry.indexOf(":") !== colon) return null; // bare IPv6 needs brackets
  const port = entry.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return null;
  return { host: entry.slice(0, colon), port: String(Number(port)) };
}

/** The canonical form of a grant entry, or an explanation of why it is not one. */
export function normalizeHostPattern(raw: string): { pattern: string } | { error: string } {
  const entry = raw.trim().toLowerCase();
  if (entry === "" || entry.length > 300) return { error: "must be a host name of at most 300 characters" };
  if (/[/?#@\\\s]/.test(entry)) return { error: "must be a host, optionally with :port (no scheme, path or user)" };
  const wildcard = entry.startsWith("*.");
  const rest = wildcard ? entry.slice(2) : entry;
  if (rest.includes("*")) return { error: "'*' is allowed only as a leading '*.' label" };
  const split = splitPort(rest);
  if (split === null) return { error: "port must be 1-65535 (IPv6 addresses go in brackets)" };
  let host: string;
  try {
    host = canonicalHost(new URL(`http://${split.host}/`));
  } catch {
    return { error: "is not a valid host name" };
  }
  if (host === "") return { error: "is not a valid host name" };
  if (wildcard && (host.startsWith("[") || isIP(host) !== 0 || !host.includes("."))) {
    return { error: "a '*.' pattern needs a domain of at least two labels after it, such as *.example.com" };
  }
  const port = split.port === null ? "" : `:${split.port}`;
  return { pattern: `${wildcard ? "*." : ""}${host}${port}` };
}

/** Whether a grant's patterns allow a request to `url`. */
export function hostAllowed(patterns: readonly string[], url: URL): boolean {
  const host = canonicalHost(url);
  const port = String(effectivePort(url));
  const isAddress = host.startsWith("[") || isIP(host) !== 0;
  return patterns.some((pattern) => {
    const split = splitPort(pattern.startsWith("*.") ? pattern.slice(2) : pattern);
    if (split === null || (split.port !== null && split.port !== port)) return false;
    if (!pattern.startsWith("*.")) return split.host === host;
    // Subdomains only: `*.example.com` matches `a.example.com`, not `example.com` or `badexample.com`.
    return !isAddress && host.endsWith(`.${split.host}`);
  });
}
