import { createHmac, randomBytes } from "node:crypto";
import { OAUTH_LIFETIMES, oauthSigningKey, postgresOidcAdapter } from "@prim/db";
import { guardedGet } from "@prim/engine";
import { WORKSPACE_TAG_PATTERN, workspaceTag } from "@prim/wire";
import type { Configuration, default as Provider } from "oidc-provider";
import type pg from "pg";

/** The one scope of the MCP resource (the tools a token reaches are the connection's, not scopes). */
export const MCP_SCOPE = "mcp";

/** Where the provider (`proxyIpHeader`) reads the caller's address, as apps/api decided it. */
export const CLIENT_IP_HEADER = "x-prim-client-ip";

const HOUR = 3600;
const DAY = 24 * HOUR;

export interface AuthServerOptions {
  /** `PRIM_AUTH_URL`: the issuer, where the server is mounted (`…/oauth`). */
  issuer: string;
  /** The MCP URL: the only resource tokens are issued for (their audience). */
  resource: string;
  /** `PRIM_INTERNAL_SECRET`: cookie keys are derived from it. */
  secret: string;
  pool: pg.Pool;
  /**
   * Wraps the ID-token signing key kept in Postgres (one RSA key shared by every process, made
   * by the first): `PRIM_MASTER_KEY`, else the cell's own master key file.
   */
  masterKey: Buffer;
  /** The revocation fan-out (`prim:revoked`). */
  publish: (message: string) => Promise<void>;
  /**
   * How Client ID Metadata Documents are fetched. The default goes through the vault's SSRF
   * guard (public addresses only, pinned, no redirects) with the library's time and size limits.
   */
  fetch?: Configuration["fetch"];
}

/**
 * The guarded fetch: a CIMD `client_id` is an https URL chosen by whoever registers, so it is
 * fetched like a vault request (never an inner address), within 2.5 s and 5 KiB, redirects not
 * followed.
 */
export const guardedFetch: NonNullable<Configuration["fetch"]> = async (url, options) => {
  const headers: Record<string, string> = {};
  new Headers(options?.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => {
    headers[name] = value;
  });
  const res = await guardedGet(new URL(String(url)), {
    timeoutMs: 2_500,
    maxBytes: 5 * 1024,
    headers,
    followRedirects: false,
  });
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (typeof value === "string") out.set(name, value);
  }
  return new Response(res.status === 204 ? null : new Uint8Array(res.body), { status: res.status, headers: out });
};

/** Hosts an `http` redirect URI may name (OAuth 2.1 §8.4.2, any port; MCP authorization). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why a redirect URI is refused, or undefined: https, or http to a loopback host (the MCP
 * authorization spec's "localhost or https"); no fragment. Private-use schemes (`com.app:/cb`)
 * are refused too: MCP clients use https or a loopback listener, and a scheme any app can
 * claim would hand the code to whichever app claimed it.
 */
export function redirectUriProblem(uri: unknown): string | undefined {
  const parsed = typeof uri === "string" ? URL.parse(uri) : null;
  if (parsed === null) return "redirect_uris must only contain valid uris";
  if (parsed.hash !== "" || String(uri).includes("#")) return "redirect_uris must not contain fragments";
  if (parsed.protocol === "https:") return undefined;
  if (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname)) return undefined;
  return `redirect_uris must use https, or http on a loopback host (127.0.0.1, [::1], localhost): ${String(uri)}`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A grant's id for a consent to `workspace`: `<workspace tag>.` and 21 random url-safe characters
 * (just the random part for a workspace without a tag), so that the access tokens of the grant
 * can carry the tag (`prefixTokens`) without a lookup when they are made.
 */
export function grantIdFor(workspace: string): string {
  const tag = workspaceTag(workspace);
  const random = randomBytes(16).toString("base64url");
  return tag === null ? random : `${tag}.${random}`;
}

const GRANT_TAG_RE = new RegExp(`^(${WORKSPACE_TAG_PATTERN})\\.`);

/**
 * `po_<workspace tag>_` / `pr_` on the opaque ids (no option for prefixes; oidc-provider 9.13 is
 * pinned for this). The tag comes from the grant's id (`grantIdFor`): the edge routes an access
 * token by it; a grant made before tags gives untagged `po_` tokens, as before.
 */
function prefixTokens(provider: Provider): void {
  for (const [model, prefix] of [
    [provider.AccessToken, "po_"],
    [provider.RefreshToken, "pr_"],
  ] as const) {
    const proto = model.prototype as unknown as { generateTokenId(): string };
    const generate = proto.generateTokenId;
    proto.generateTokenId = function prefixed(this: { grantId?: string }) {
      const tag = prefix === "po_" ? GRANT_TAG_RE.exec(this.grantId ?? "")?.[1] : undefined;
      return `${prefix}${tag === undefined ? "" : `${tag}_`}${generate.call(this)}`;
    };
  }
}

/**
 * The MCP authorization server (CLOUD.md, "OAuth for MCP"): public clients only (dynamic
 * registration and Client ID Metadata Documents), authorization code with PKCE S256, the MCP
 * URL as the only resource (else `invalid_target`) and the tokens' audience, access tokens
 * `po_…` for an hour, refresh tokens `pr_…` for 30 days replaced on every use, login and consent
 * through the dashboard (the interaction routes of `mount.ts`).
 */
export async function createAuthProvider(options: AuthServerOptions): Promise<Provider> {
  // Loaded only when the server is mounted: processes without OAuth never load the library.
  const { default: Provider, errors } = await import("oidc-provider");
  const { resource } = options;
  const cookieKey = createHmac("sha256", options.secret).update("prim oauth cookies v1").digest("hex");
  const configuration: Configuration = {
    adapter: postgresOidcAdapter(options.pool, options.publish) as unknown as Configuration["adapter"],
    jwks: { keys: [(await oauthSigningKey(options.pool, options.masterKey)) as never] },
    cookies: { keys: [cookieKey] },
    clientAuthMethods: ["none"],
    // Every client's metadata passes here: registration, Client ID Metadata Documents, and
    // clients read back from the store. The message's `redirect_uris` prefix makes the library
    // answer RFC 7591's `invalid_redirect_uri`.
    extraClientMetadata: {
      properties: ["redirect_uris"],
      validator: (_ctx, key, value) => {
        if (key !== "redirect_uris" || !Array.isArray(value)) return;
        for (const uri of value) {
          const problem = redirectUriProblem(uri);
          if (problem !== undefined) throw new errors.InvalidClientMetadata(problem);
        }
      },
    },
    clientDefaults: {
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    },
    responseTypes: ["code"],
    pkce: { required: () => true },
    // `mcp` is listed so that clients may register it (the SDK sends the resource's
    // scopes_supported); a consent grants it as the resource's scope and, when asked, as such.
    scopes: ["openid", "offline_access", MCP_SCOPE],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      clientIdMetadataDocument: { enabled: true, ack: "draft-02" } as never,
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) {
            throw new errors.InvalidTarget(`the only resource served here is ${resource}`);
          }
          return {
            scope: MCP_SCOPE,
            audience: resource,
            accessTokenTTL: OAUTH_LIFETIMES.accessToken,
            accessTokenFormat: "opaque",
          };
        },
      },
    },
    // Refresh tokens for every client allowed the grant, each use replaced by a new one.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: OAUTH_LIFETIMES.accessToken,
      AuthorizationCode: 60,
      RefreshToken: OAUTH_LIFETIMES.refreshToken,
      // A grant lives until it is disconnected; its refresh tokens bound each 30-day stretch.
      Grant: 5 * 365 * DAY,
      Interaction: 10 * 60,
      Session: 14 * DAY,
    },
    // Every authorization is consented anew (the user picks workspace, group and tools each time).
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId === undefined ? undefined : ctx.oidc.provider.Grant.find(grantId);
    },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    interactions: {
      url: async (_ctx, interaction) => `${new URL(options.issuer).pathname}/interaction/${interaction.uid}`,
    },
    fetch: options.fetch ?? guardedFetch,
    // A plain page for the browser (the default one asks to be replaced); text only, escaped.
    renderError: async (ctx, out) => {
      ctx.type = "html";
      const text = `${out.error}${out.error_description ? `: ${out.error_description}` : ""}`;
      ctx.body = `<!doctype html><meta charset="utf-8"><title>Authorization error</title><h1>Authorization error</h1><p>${escapeHtml(text)}</p>`;
    },
  };
  const provider = new Provider(options.issuer, configuration);
  // Trusted because mount.ts overwrites what it reads (`pinToIssuer`): the host and protocol
  // become PRIM_AUTH_URL's (an https issuer behind a TLS proxy gets https endpoints and secure
  // cookies), the address the one apps/api trusts.
  provider.proxy = true;
  provider.proxyIpHeader = CLIENT_IP_HEADER;
  prefixTokens(provider);
  return provider;
}
