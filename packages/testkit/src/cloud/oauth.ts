// The OAuth stack for tests: apps/api with its authorization server, apps/mcp, and the
// dashboard's consent route (`POST /oauth/consent/<uid>`, CLOUD.md "Dashboard routes") served by
// a small HTTP server over the real consent functions of @prim/db; the dashboard's own login is
// the dashboard issue's, so here the signed-in user is named by a `user` cookie. A browser is a
// cookie jar following redirects by hand; the agent is the official SDK's `auth()` with an
// OAuthClientProvider kept in memory.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { consentDecisionFromForm, describeAuthorization, signConsent } from "@prim/db";
import { TOOLS } from "@prim/mcp";
import { createMcpApp, type McpApp, readMcpEnv } from "@prim/mcp-server";
import { freePort } from "../ports.js";
import { startCloud, type TestCloud } from "./cloud.js";

export const REDIRECT = "http://127.0.0.1:9/callback";

/** The tool catalog a consent is checked against (the dashboard's, every MCP tool's name). */
export const TOOL_NAMES = TOOLS.map((tool) => tool.name);

export interface OAuthStack {
  cloud: TestCloud;
  mcp: McpApp;
  /** The MCP endpoint (`…/mcp`), the issuer (`…/oauth`), the dashboard's origin. */
  mcpUrl: string;
  issuer: string;
  dashboard: string;
  secret: string;
  /** The cell's internal invoke (apps/mcp and the dashboard reach data through it). */
  internalUrl: string;
  /** Client ID Metadata Documents the authorization server can fetch, by URL. */
  documents: Map<string, unknown>;
  stop(): Promise<void>;
}

type ErrorLike = { status?: number; code?: string; message: string };

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
}

/** The dashboard's consent GET and POST: checks and signs the decision, sends the browser back. */
function consentRoute(stack: () => OAuthStack): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s = stack();
      const uid = /^\/oauth\/consent\/([^/?]+)$/.exec(req.url ?? "")?.[1];
      const user = /(?:^|;\s*)user=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
      if (req.method === "GET" && uid !== undefined) {
        // The screen's facts, as JSON here (the dashboard renders them with its form).
        describeAuthorization(s.cloud.api.hub.pool, uid).then(
          (pending) => reply(res, 200, pending),
          (err: ErrorLike) => reply(res, err.status ?? 500, { error: { code: err.code, message: err.message } }),
        );
        return;
      }
      if (req.method !== "POST" || uid === undefined || user === undefined) {
        reply(res, 400, { error: { code: "invalid_request", message: "bad request" } });
        return;
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      const decision = consentDecisionFromForm(uid, user, form);
      signConsent(s.cloud.api.hub.pool, s.secret, decision, { catalog: TOOL_NAMES })
        .then((result) => {
          res.statusCode = 303;
          res.setHeader("location", `${s.issuer}/interaction/${uid}/complete?result=${encodeURIComponent(result)}`);
          res.end();
        })
        .catch((err: ErrorLike) =>
          reply(res, err.status ?? 500, { error: { code: err.code ?? "internal_error", message: err.message } }),
        );
    });
  });
}

/**
 * The stack; `options.dashboard` names a real dashboard's origin (apps/web's e2e test), else the
 * consent route here stands in for it.
 */
export async function startOAuthStack(
  label: string,
  options: { dashboard?: string; env?: Record<string, string> } = {},
): Promise<OAuthStack> {
  const secret = randomBytes(24).toString("hex");
  const [apiPort, mcpPort] = [await freePort(), await freePort()];
  const documents = new Map<string, unknown>();
  let stack: OAuthStack | undefined;
  const dashboardServer = options.dashboard === undefined ? consentRoute(() => stack as OAuthStack) : undefined;
  let dashboard = options.dashboard ?? "";
  if (dashboardServer !== undefined) {
    await new Promise<void>((resolve) => dashboardServer.listen(0, "127.0.0.1", resolve));
    dashboard = `http://127.0.0.1:${(dashboardServer.address() as AddressInfo).port}`;
  }
  const issuer = `http://127.0.0.1:${apiPort}/oauth`;
  const mcpOrigin = `http://127.0.0.1:${mcpPort}`;
  const cloud = await startCloud(
    label,
    {
      PRIM_INTERNAL_SECRET: secret,
      PRIM_AUTH_URL: issuer,
      PRIM_PUBLIC_MCP_URL: mcpOrigin,
      PRIM_DASHBOARD_URL: dashboard,
      ...options.env,
    },
    {
      port: apiPort,
      // Documents are served from memory: the default fetch (the vault's guard) refuses this
      // machine's addresses, which is tested on its own.
      oauthFetch: async (url) => {
        const doc = documents.get(String(url));
        return doc === undefined
          ? new Response("not found", { status: 404 })
          : new Response(JSON.stringify(doc), { status: 200, headers: { "content-type": "application/json" } });
      },
    },
  );
  const internalUrl = cloud.internalUrl;
  const mcp = await createMcpApp(
    readMcpEnv({
      DATABASE_URL: cloud.databaseUrl,
      PRIM_INTERNAL_URL: internalUrl,
      PRIM_INTERNAL_SECRET: secret,
      PRIM_PUBLIC_MCP_URL: mcpOrigin,
      PRIM_AUTH_URL: issuer,
      // Where vault_request_secret sends a person (the dashboard's secret request page).
      PRIM_DASHBOARD_URL: dashboard,
    }),
  );
  await mcp.app.listen({ port: mcpPort, host: "127.0.0.1" });
  stack = {
    cloud,
    mcp,
    mcpUrl: `${mcpOrigin}/mcp`,
    issuer,
    dashboard,
    secret,
    internalUrl,
    documents,
    stop: async () => {
      await mcp.close();
      await cloud.stop();
      if (dashboardServer !== undefined) await new Promise((resolve) => dashboardServer.close(resolve));
    },
  };
  return stack;
}

/** A browser: a cookie jar per host, redirects followed by hand. */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  constructor(cookies: Record<string, Record<string, string>> = {}) {
    for (const [host, values] of Object.entries(cookies)) this.jar.set(host, new Map(Object.entries(values)));
  }

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = this.jar.get(target.host);
    const headers = new Headers(init.headers);
    if (cookies !== undefined && cookies.size > 0) {
      headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = (pair as string).indexOf("=");
      const name = (pair as string).slice(0, eq).trim();
      const value = (pair as string).slice(eq + 1).trim();
      const hostJar = this.jar.get(target.host) ?? new Map<string, string>();
      this.jar.set(target.host, hostJar);
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) hostJar.delete(name);
      else hostJar.set(name, value);
    }
    return res;
  }

  /**
   * Follows redirects from `url` until one leaves for `stopAt` (answered as a URL), or a page
   * that is not a redirect (answered as the response).
   */
  async follow(url: string, stopAt: string, init: RequestInit = {}): Promise<URL | Response> {
    let next = url;
    let options = init;
    for (let hop = 0; hop < 20; hop++) {
      const res = await this.request(next, options);
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || location === null) return res;
      const resolved = new URL(location, next);
      if (resolved.href.startsWith(stopAt)) return resolved;
      next = resolved.href;
      options = {};
    }
    throw new Error("too many redirects");
  }
}

/** Submits the consent form as the dashboard's page would (urlencoded, tools repeated). */
export function consentForm(fields: {
  workspace?: string;
  group?: string;
  tools?: string[];
  /** The screen's "every tool" choice (`every_tool=yes`). */
  everyTool?: boolean;
  /** The screen's "Read-only" box (`read_only=on`, as a checkbox posts it). */
  readOnly?: boolean;
  action: "allow" | "deny";
}): RequestInit {
  const form = new URLSearchParams();
  if (fields.workspace !== undefined) form.set("workspace", fields.workspace);
  if (fields.group !== undefined) form.set("group", fields.group);
  for (const tool of fields.tools ?? []) form.append("tools", tool);
  if (fields.everyTool === true) form.set("every_tool", "yes");
  if (fields.readOnly === true) form.set("read_only", "on");
  form.set("action", fields.action);
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  };
}

/** The agent's OAuth state, in memory (the SDK's OAuthClientProvider). */
export class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;

  constructor(
    readonly clientMetadataUrl?: string,
    readonly name = "Test Agent",
  ) {}

  get redirectUrl(): string {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * One consent in the browser: from the authorization URL to the dashboard's consent page, the
 * form submitted, and back to the client's redirect URI (answered as that URL, or the page the
 * flow stopped on).
 */
export async function consent(
  stack: OAuthStack,
  browser: Browser,
  authorizationUrl: URL,
  fields: Parameters<typeof consentForm>[0],
): Promise<URL | Response> {
  const page = await browser.follow(authorizationUrl.href, `${stack.dashboard}/oauth/consent/`);
  if (!(page instanceof URL)) return page;
  const shown = await browser.request(page.href);
  if (shown.status !== 200) return shown;
  return browser.follow(page.href, REDIRECT, consentForm(fields));
}

/** A PKCE pair (S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** A public client registered dynamically (RFC 7591), answered by its client_id. */
export async function registerClient(stack: OAuthStack, name = "Raw Client"): Promise<string> {
  const res = await fetch(`${stack.issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** An authorization request URL; `params` overrides or (with undefined) removes parameters. */
export function authorizeUrl(
  stack: OAuthStack,
  clientId: string,
  challenge: string,
  params: Record<string, string | undefined> = {},
): URL {
  const url = new URL(`${stack.issuer}/auth`);
  const all: Record<string, string | undefined> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: "mcp",
    state: "st4te",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: stack.mcpUrl,
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
  return url;
}

/** The token endpoint with form fields; answers status and JSON body. */
export async function tokenRequest(stack: OAuthStack, fields: Record<string, string>) {
  const res = await fetch(`${stack.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string | number> };
}

/** The authorization code grant at the token endpoint, for the MCP resource (PKCE, REDIRECT). */
export function exchangeCode(stack: OAuthStack, c: { clientId: string; verifier: string; code: string }) {
  return tokenRequest(stack, {
    grant_type: "authorization_code",
    code: c.code,
    client_id: c.clientId,
    redirect_uri: REDIRECT,
    code_verifier: c.verifier,
    resource: stack.mcpUrl,
  });
}

/**
 * An access token of `user`'s: a client registered as `clientName`, the consent given in the
 * browser with `fields`, the code exchanged (PKCE). Throws where the flow stops.
 */
export async function consentedToken(
  stack: OAuthStack,
  user: string,
  fields: Parameters<typeof consentForm>[0],
  clientName?: string,
): Promise<string> {
  const clientId = await registerClient(stack, clientName);
  const { verifier, challenge } = pkce();
  const browser = new Browser({ [new URL(stack.dashboard).host]: { user } });
  const back = await consent(stack, browser, authorizeUrl(stack, clientId, challenge), fields);
  if (!(back instanceof URL)) throw new Error(`consent: ${back.status} ${await back.text()}`);
  const issued = await exchangeCode(stack, { clientId, verifier, code: back.searchParams.get("code") as string });
  if (issued.status !== 200) throw new Error(`token: ${issued.status} ${JSON.stringify(issued.body)}`);
  return issued.body.access_token as string;
}
