import { createHash, timingSafeEqual } from "node:crypto";
import { LOCAL_PRINCIPAL, type Principal, ServiceError, SIGNED_URL_PRINCIPAL } from "@prim/engine";
import { bearerToken, TOKEN68_RE } from "@prim/wire";
import type { FastifyRequest } from "fastify";

export interface LocalAuthOptions {
  /** With a root token, every request must carry it as a Bearer credential. */
  rootToken?: string | undefined;
}

/** The root token's principal: account-level, audited as `key:root`. */
export const ROOT_PRINCIPAL: Principal = {
  kind: "account",
  workspace: "local",
  actor: "key:root",
  groupId: null,
  tools: null,
};

/**
 * Who opens the secret request page without the root token when one is set (a browser sends no
 * Bearer header): no rights at all — every operation refuses it — so the page works only where it
 * checks the token itself (secret-request-page.ts, given the same root token) and fails closed
 * anywhere else.
 */
export const PAGE_VISITOR: Principal = {
  kind: "scoped",
  workspace: "local",
  actor: "secret-request-page",
  groupId: null,
  tools: [],
};

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** `localhost:7777` → `localhost`; `[::1]:7777` → `[::1]`. */
function hostname(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const colon = host.indexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

function isLocalOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOCAL_HOSTS.has(url.hostname);
  } catch {
    return false; // includes the opaque origin "null"
  }
}

/**
 * The path of a request target, without its query: rules about paths must not be fooled by a
 * query string (`/health?x=1` is `/health`). The raw path is compared, not a decoded one, so
 * `/%68ealth` is not exempt: an odd spelling can only make a rule stricter.
 */
export function requestPath(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** Node keeps the first of several Host headers; a proxy may keep another, so refuse them all. */
function hostHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === "host") count++;
  return count;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * The local engine's rules: requests addressed to another host (DNS rebinding) and cross-site
 * browser requests are refused with 403; with a root token, a missing or wrong Bearer is 401.
 * `/health` needs no token; signed URLs (`/v1/signed/…`) carry their own credential, so they
 * need no token and may come from any site. The secret request page (`/secret-requests/…`) is
 * opened by a browser, which sends no Bearer header: it needs none here, and with a root token
 * its form asks for the token itself (secret-request-page.ts). Returns the caller's principal.
 */
export function localAuthenticator(options: LocalAuthOptions) {
  if (options.rootToken !== undefined && !TOKEN68_RE.test(options.rootToken)) {
    throw new Error(
      "the root token must be a token68 (letters, digits, -._~+/ and trailing =): a Bearer header carries nothing else",
    );
  }
  const expected = options.rootToken === undefined ? null : digest(options.rootToken);
  return (req: FastifyRequest): Principal => {
    const host = req.headers.host;
    if (host === undefined || !LOCAL_HOSTS.has(hostname(host)) || hostHeaderCount(req.raw.rawHeaders) > 1) {
      throw new ServiceError("forbidden", "the local engine answers only requests addressed to localhost");
    }
    const path = requestPath(req.url);
    if (path.startsWith("/v1/signed/")) return SIGNED_URL_PRINCIPAL;
    const page = path.startsWith("/secret-requests/");
    const requireToken = path !== "/health" && !page;
    const origin = req.headers.origin;
    if (req.headers["sec-fetch-site"] === "cross-site" || (origin !== undefined && !isLocalOrigin(origin))) {
      throw new ServiceError("forbidden", "cross-site requests to the local engine are refused");
    }
    if (expected === null || (!requireToken && !page)) return LOCAL_PRINCIPAL;
    const token = bearerToken(req.headers.authorization);
    // Compare digests so the comparison takes the same time whatever the token's length.
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      if (page) return PAGE_VISITOR;
      throw new ServiceError("invalid_token", "missing or wrong Bearer token", {
        headers: { "WWW-Authenticate": 'Bearer realm="prim"' },
      });
    }
    return ROOT_PRINCIPAL;
  };
}
