// The authorization server's own URLs come from PRIM_AUTH_URL only: metadata, the interaction's
// way back (resume) and the authorization response's `iss` ignore `Host`, `X-Forwarded-Host` and
// `X-Forwarded-Proto`. Clients may register (or describe in a metadata document) only https
// redirect URIs or loopback http ones; anything else is refused with `invalid_redirect_uri`.
import { request } from "node:http";
import { createUser, createWorkspace } from "@prim/db";
import {
  authorizeUrl,
  Browser,
  call,
  consentForm,
  type OAuthStack,
  pkce,
  REDIRECT,
  registerClient,
  startOAuthStack,
} from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let stack: OAuthStack;
let workspace: string;
let alice: string;

beforeAll(async () => {
  stack = await startOAuthStack("oauthorigin");
  const pool = stack.cloud.api.hub.pool;
  const ws = await createWorkspace(pool, { name: "Acme", plan: "pro" });
  workspace = ws.workspace.id;
  alice = (await createUser(pool, { email: "alice@acme.test", password: "correct horse 1", workspace })).id;
  await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** What a client behind a hostile proxy (or a hostile client) claims about where it came to. */
const SPOOFED = { host: "evil.test", "x-forwarded-host": "evil.test", "x-forwarded-proto": "https" };

/** A GET with headers fetch() will not send (`Host`); answers status, location and body. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; location: string | undefined; body: string }>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          location: res.headers.location,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** Every URL in a metadata document (strings that parse as absolute http(s) URLs). */
function urlsIn(doc: Record<string, unknown>): string[] {
  return Object.values(doc).filter((v): v is string => typeof v === "string" && /^https?:\/\//.test(v));
}

async function register(redirectUris: string[]) {
  const res = await fetch(`${stack.issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Redirect Test",
      redirect_uris: redirectUris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe("the issuer and its endpoints", () => {
  it("metadata names PRIM_AUTH_URL whatever Host and X-Forwarded-* say", async () => {
    const origin = new URL(stack.issuer).origin;
    for (const path of ["/.well-known/oauth-authorization-server/oauth", "/oauth/.well-known/openid-configuration"]) {
      const plain = await rawGet(`${origin}${path}`, {});
      const spoofed = await rawGet(`${origin}${path}`, SPOOFED);
      expect(spoofed.status, path).toBe(200);
      const doc = JSON.parse(spoofed.body) as Record<string, unknown>;
      expect(doc.issuer).toBe(stack.issuer);
      expect(urlsIn(doc).length).toBeGreaterThan(3);
      for (const url of urlsIn(doc)) expect(url.startsWith(`${stack.issuer}/`) || url === stack.issuer, url).toBe(true);
      // The same document as an honest request gets.
      expect(doc).toEqual(JSON.parse(plain.body));
    }
  });

  it("the interaction, its way back and the response's iss stay on PRIM_AUTH_URL", async () => {
    const clientId = await registerClient(stack);
    const browser = new Browser({ [new URL(stack.dashboard).host]: { user: alice } });
    const hop = async (url: string, init: RequestInit = {}) => {
      const res = await browser.request(url, { ...init, headers: { ...SPOOFED, ...(init.headers ?? {}) } });
      expect(res.status, url).toBe(303);
      return new URL(res.headers.get("location") as string, url);
    };
    const interaction = await hop(authorizeUrl(stack, clientId, pkce().challenge).href);
    expect(interaction.origin).toBe(new URL(stack.issuer).origin);
    expect(interaction.pathname).toMatch(/^\/oauth\/interaction\//);
    const screen = await hop(interaction.href);
    expect(screen.href.startsWith(`${stack.dashboard}/oauth/consent/`)).toBe(true);
    const complete = await hop(
      screen.href,
      consentForm({ workspace, group: "app", tools: ["kv_get"], action: "allow" }),
    );
    const resume = await hop(complete.href);
    expect(resume.href.startsWith(`${stack.issuer}/`), resume.href).toBe(true);
    const back = await hop(resume.href);
    expect(back.href.startsWith(REDIRECT)).toBe(true);
    expect(back.searchParams.get("iss")).toBe(stack.issuer);
    expect(back.searchParams.get("code")).toBeTruthy();
  });
});

describe("redirect URIs", () => {
  it("registers https and loopback http only; refuses other hosts over http, fragments and other schemes", async () => {
    for (const uri of [
      "http://evil.test/cb",
      "http://127.0.0.2/cb",
      "http://localhost.evil.test/cb",
      "https://app.example/cb#frag",
      "com.example.app:/cb",
      "javascript:alert(1)",
      "ftp://app.example/cb",
    ]) {
      const refused = await register([REDIRECT, uri]);
      expect(refused.status, uri).toBe(400);
      expect(refused.body.error, uri).toBe("invalid_redirect_uri");
      expect(refused.body.error_description, uri).toMatch(/^redirect_uris/);
    }
    const accepted = await register([
      "https://app.example/cb",
      "http://127.0.0.1/cb",
      "http://127.0.0.1:33418/cb",
      "http://[::1]:8080/cb",
      "http://localhost:6274/oauth/callback",
    ]);
    expect(accepted.status).toBe(201);
    expect(accepted.body.client_id).toBeTruthy();
  });

  it("a Client ID Metadata Document with a non-loopback http redirect URI is refused; https is taken", async () => {
    const bad = "https://bad-agent.example.com/client.json";
    const good = "https://good-agent.example.com/client.json";
    const doc = (clientId: string, redirect: string) => ({
      client_id: clientId,
      client_name: "Doc Agent",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    stack.documents.set(bad, doc(bad, "http://evil.test/cb"));
    stack.documents.set(good, doc(good, "https://good-agent.example.com/cb"));
    const { challenge } = pkce();
    const browser = new Browser();
    const refused = await browser.request(
      authorizeUrl(stack, bad, challenge, { redirect_uri: "http://evil.test/cb" }).href,
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();
    expect(await refused.text()).toMatch(/redirect_uris/);
    const taken = await browser.request(
      authorizeUrl(stack, good, challenge, { redirect_uri: "https://good-agent.example.com/cb" }).href,
    );
    expect(taken.status).toBe(303);
    expect(new URL(taken.headers.get("location") as string, stack.issuer).pathname).toMatch(/^\/oauth\/interaction\//);
  });
});
