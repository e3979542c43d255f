// What the authorization server and apps/mcp refuse: missing or `plain` PKCE, a wrong verifier,
// a foreign redirect URI, a wrong resource, an expired or reused code, a token for another
// audience or past its hour, consent for a group outside the user's workspace, a non-member or
// billing-only user, forged, replayed or re-addressed consent results, a denial; and the group
// selection rules as one table over pk_ keys and a po_ token.
import { acceptConsent, createKey, createUser, createWorkspace, hashId, signConsent } from "@prim/db";
import {
  authorizeUrl,
  Browser,
  call,
  consentForm,
  exchangeCode,
  type OAuthStack,
  pkce,
  REDIRECT,
  registerClient,
  startOAuthStack,
  TOOL_NAMES,
} from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpApp, readMcpEnv } from "../src/index.js";
import { rawInitialize as initialize } from "./raw.js";

let stack: OAuthStack;
let workspace: string;
let workspaceKey: string;
let otherGroupId: string; // a group of another workspace
let alice: string;
let dashboardHost: string;

beforeAll(async () => {
  stack = await startOAuthStack("oauthneg");
  const pool = stack.cloud.api.hub.pool;
  const ws = await createWorkspace(pool, { name: "Acme", plan: "pro" });
  workspace = ws.workspace.id;
  workspaceKey = ws.key;
  alice = (await createUser(pool, { email: "alice@acme.test", password: "correct horse 1", workspace })).id;
  for (const group of ["app", "ops"]) await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: group });
  const other = await createWorkspace(pool, { name: "Other", plan: "pro" });
  otherGroupId = (await call(stack.cloud.url, other.key, "POST", "/v1/groups", { name: "secret" })).body.id;
  dashboardHost = new URL(stack.dashboard).host;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const asUser = (user: string) => new Browser({ [dashboardHost]: { user } });

/** From the authorization URL to the consent page (its URL), in this browser. */
async function toConsent(browser: Browser, url: URL): Promise<URL> {
  const page = await browser.follow(url.href, `${stack.dashboard}/oauth/consent/`);
  if (!(page instanceof URL)) throw new Error(`no consent page: ${page.status} ${await page.text()}`);
  return page;
}

/** A code for a fresh client after alice allows `tools` on `group`. */
async function code(tools = ["kv_get"], group = "app") {
  const clientId = await registerClient(stack);
  const { verifier, challenge } = pkce();
  const browser = asUser(alice);
  const page = await toConsent(browser, authorizeUrl(stack, clientId, challenge));
  const back = await browser.follow(page.href, REDIRECT, consentForm({ workspace, group, tools, action: "allow" }));
  if (!(back instanceof URL)) throw new Error(`consent: ${back.status} ${await back.text()}`);
  return { clientId, verifier, code: back.searchParams.get("code") as string };
}

const exchange = (c: { clientId: string; verifier: string; code: string }) => exchangeCode(stack, c);

/** The error an authorization request ends in, as the redirect to the client reports it. */
async function authorizationError(url: URL): Promise<URLSearchParams> {
  const res = await asUser(alice).request(url.href);
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get("location") as string);
  expect(location.href.startsWith(REDIRECT)).toBe(true);
  expect(location.searchParams.get("iss")).toBe(stack.issuer);
  return location.searchParams;
}

describe("authorization requests", () => {
  it("PKCE is required, S256 only", async () => {
    const clientId = await registerClient(stack);
    const { challenge } = pkce();
    const none = await authorizationError(
      authorizeUrl(stack, clientId, challenge, { code_challenge: undefined, code_challenge_method: undefined }),
    );
    expect(none.get("error")).toBe("invalid_request");
    const plain = await authorizationError(
      authorizeUrl(stack, clientId, challenge, { code_challenge_method: "plain" }),
    );
    expect(plain.get("error")).toBe("invalid_request");
  });

  it("a redirect URI that was not registered exactly gets an error page, never a redirect", async () => {
    const clientId = await registerClient(stack);
    const { challenge } = pkce();
    for (const redirect of ["http://evil.test/callback", `${REDIRECT}/extra`, `${REDIRECT}?x=1`]) {
      const res = await asUser(alice).request(
        authorizeUrl(stack, clientId, challenge, { redirect_uri: redirect }).href,
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("a resource other than the MCP URL is invalid_target", async () => {
    const clientId = await registerClient(stack);
    const { challenge } = pkce();
    for (const resource of ["https://elsewhere.test/mcp", `${stack.mcpUrl}/`, stack.mcpUrl.replace("/mcp", "")]) {
      const params = await authorizationError(authorizeUrl(stack, clientId, challenge, { resource }));
      expect(params.get("error")).toBe("invalid_target");
    }
  });

  it("a denial ends the flow with access_denied", async () => {
    const clientId = await registerClient(stack);
    const browser = asUser(alice);
    const page = await toConsent(browser, authorizeUrl(stack, clientId, pkce().challenge));
    // What the consent screen shows: the client and the resource it asks for.
    expect(await (await browser.request(page.href)).json()).toMatchObject({
      client_id: clientId,
      client_name: "Raw Client",
      redirect_uri: REDIRECT,
      resource: stack.mcpUrl,
    });
    const back = (await browser.follow(page.href, REDIRECT, consentForm({ action: "deny" }))) as URL;
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("iss")).toBe(stack.issuer);
    expect(back.searchParams.get("code")).toBeNull();
    // Finished: the screen has nothing to show any more.
    expect((await browser.request(page.href)).status).toBe(404);
  });
});

describe("the token endpoint", () => {
  it("refuses a wrong verifier", async () => {
    const c = await code();
    const res = await exchange({ ...c, verifier: pkce().verifier });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("refuses an expired code", async () => {
    const c = await code();
    await stack.cloud.api.hub.pool.query(
      "UPDATE oauth_store SET expires_at = now() - interval '1 second' WHERE model = 'AuthorizationCode' AND id_hash = $1",
      [hashId(c.code)],
    );
    const res = await exchange(c);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("refuses a code used twice, and ends what the first use issued", async () => {
    const c = await code();
    const first = await exchange(c);
    expect(first.status).toBe(200);
    const token = first.body.access_token as string;
    expect((await initialize(stack.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(200);
    const again = await exchange(c);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect((await initialize(stack.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it("a token its client revokes (RFC 7009) stops at once, though apps/mcp had it cached", async () => {
    const c = await code();
    const token = (await exchange(c)).body.access_token as string;
    expect((await initialize(stack.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(200);
    const res = await fetch(`${stack.issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, token_type_hint: "access_token", client_id: c.clientId }).toString(),
    });
    expect(res.status).toBe(200);
    expect((await initialize(stack.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it("registers public clients only", async () => {
    for (const method of ["client_secret_basic", "client_secret_post"]) {
      const res = await fetch(`${stack.issuer}/reg`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: method }),
      });
      expect(res.status, method).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
  });

  it("a token past its hour, or for another audience, is 401 invalid_token at the resource", async () => {
    const issued = await exchange(await code());
    const token = issued.body.access_token as string;
    // Another resource server (another MCP URL) over the same control plane refuses it.
    const elsewhere = await createMcpApp(
      readMcpEnv({
        DATABASE_URL: stack.cloud.databaseUrl,
        PRIM_INTERNAL_SECRET: stack.secret,
        PRIM_PUBLIC_MCP_URL: "https://other-mcp.test",
        PRIM_AUTH_URL: stack.issuer,
      }),
    );
    try {
      const url = `${await elsewhere.app.listen({ port: 0, host: "127.0.0.1" })}/mcp`;
      const res = await initialize(url, { authorization: `Bearer ${token}` });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: "invalid_token",
        message: expect.stringContaining("another resource"),
      });
    } finally {
      await elsewhere.close();
    }
    const late = (await exchange(await code())).body.access_token as string;
    await stack.cloud.api.hub.pool.query(
      `UPDATE oauth_store SET payload = jsonb_set(payload, '{exp}', to_jsonb(extract(epoch from now())::int - 1))
        WHERE model = 'AccessToken' AND id_hash = $1`,
      [hashId(late)],
    );
    const res = await initialize(stack.mcpUrl, { authorization: `Bearer ${late}` });
    expect(res.status).toBe(401);
  });
});

describe("consent", () => {
  /** Posts the consent form as `user` for a fresh authorization; answers the dashboard's reply. */
  async function submit(user: string, fields: Parameters<typeof consentForm>[0]) {
    const browser = asUser(user);
    const page = await toConsent(browser, authorizeUrl(stack, await registerClient(stack), pkce().challenge));
    return { browser, page, res: await browser.request(page.href, consentForm(fields)) };
  }

  it("refuses a group outside the user's workspace, a workspace the user is not in, a non-member and a billing-only member", async () => {
    const pool = stack.cloud.api.hub.pool;
    const carol = (await createUser(pool, { email: "carol@nowhere.test", password: "correct horse 3" })).id;
    const billing = (
      await createUser(pool, { email: "bill@acme.test", password: "correct horse 4", workspace, role: "billing" })
    ).id;
    const count = async () => (await pool.query("SELECT 1 FROM oauth_connections")).rowCount;
    const before = await count();
    const cases: [string, Parameters<typeof consentForm>[0], number, string][] = [
      [alice, { workspace, group: otherGroupId, tools: ["kv_get"], action: "allow" }, 404, "not_found"],
      [alice, { workspace, group: "nowhere", tools: ["kv_get"], action: "allow" }, 404, "not_found"],
      [carol, { workspace, group: "app", tools: ["kv_get"], action: "allow" }, 404, "not_found"],
      [billing, { workspace, group: "app", tools: ["kv_get"], action: "allow" }, 403, "forbidden"],
      [alice, { workspace, group: "app", tools: [], action: "allow" }, 400, "invalid_request"],
      [alice, { workspace, group: "app", tools: ["DROP TABLE"], action: "allow" }, 400, "invalid_request"],
    ];
    for (const [user, fields, status, errorCode] of cases) {
      const { res } = await submit(user, fields);
      expect(res.status, JSON.stringify(fields)).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(errorCode);
    }
    expect(await count()).toBe(before);
  });

  it("a signed result is single-use, bound to its interaction, and cannot be forged", async () => {
    const { browser, page, res } = await submit(alice, { workspace, group: "app", tools: ["kv_get"], action: "allow" });
    const complete = new URL(res.headers.get("location") as string);
    const result = complete.searchParams.get("result") as string;
    // Forged: the signature of another body.
    const [body, mac] = result.split(".") as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), group: otherGroupId })).toString("base64url")}.${mac}`;
    const forgedUrl = new URL(complete);
    forgedUrl.searchParams.set("result", forged);
    const refused = await browser.request(forgedUrl.href);
    expect(refused.status).toBe(403);
    // Another interaction's result, in this interaction's browser: refused for this one.
    const second = await submit(alice, { workspace, group: "app", tools: ["kv_get"], action: "allow" });
    const otherResult = new URL(second.res.headers.get("location") as string).searchParams.get("result") as string;
    const crossed = new URL(complete);
    crossed.searchParams.set("result", otherResult);
    expect((await browser.request(crossed.href)).status).toBe(403);
    // The genuine one works once.
    const done = await browser.follow(complete.href, REDIRECT);
    expect(done instanceof URL && done.searchParams.get("code")).toBeTruthy();
    const replay = await browser.request(complete.href);
    expect(replay.status).toBe(400);
    expect(page.pathname).toMatch(/^\/oauth\/consent\//);
  });
});

describe("consent results at the authorization server", () => {
  it("spends a result once, refuses it for another interaction, past its two minutes, or under another secret", async () => {
    const pool = stack.cloud.api.hub.pool;
    const decision = {
      action: "allow" as const,
      uid: "uid-one",
      user: alice,
      workspace,
      group: "app",
      tools: ["kv_get"],
    };
    const result = await signConsent(pool, stack.secret, decision, { catalog: TOOL_NAMES });
    await expect(acceptConsent(pool, stack.secret, result, "uid-two")).rejects.toMatchObject({ code: "forbidden" });
    await expect(acceptConsent(pool, "x".repeat(48), result, "uid-one")).rejects.toMatchObject({ code: "forbidden" });
    const late = await signConsent(pool, stack.secret, decision, {
      catalog: TOOL_NAMES,
      now: Date.now() - 3 * 60_000,
    });
    await expect(acceptConsent(pool, stack.secret, late, "uid-one")).rejects.toMatchObject({
      message: expect.stringContaining("expired"),
    });
    expect(await acceptConsent(pool, stack.secret, result, "uid-one")).toMatchObject({
      user: alice,
      tools: ["kv_get"],
    });
    await expect(acceptConsent(pool, stack.secret, result, "uid-one")).rejects.toMatchObject({
      message: expect.stringContaining("already used"),
    });
  });
});

describe("group selection and scoping over keys and OAuth tokens", () => {
  it("follows rules 1-3 for every kind of credential", async () => {
    const token = (await exchange(await code(["kv_get"], "app"))).body.access_token as string;
    const oneGroup = (await createKey(stack.cloud.api.hub.pool, { workspace, group: "ops" })).key;
    const rows: [string, string, string | undefined, number, string | null][] = [
      ["workspace key, no header", workspaceKey, undefined, 400, "invalid_request"],
      ["workspace key, app", workspaceKey, "app", 200, null],
      ["one-group key, no header", oneGroup, undefined, 200, null],
      ["one-group key, its group", oneGroup, "ops", 200, null],
      ["one-group key, another group", oneGroup, "app", 403, "group_mismatch"],
      ["po_ token, no header", token, undefined, 200, null],
      ["po_ token, its group", token, "app", 200, null],
      ["po_ token, another group", token, "ops", 403, "group_mismatch"],
      ["po_ token, no such group", token, "nowhere", 403, "group_mismatch"],
    ];
    for (const [label, credential, group, status, errorCode] of rows) {
      const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
      if (group !== undefined) headers["x-service-group"] = group;
      const res = await initialize(stack.mcpUrl, headers);
      expect(res.status, label).toBe(status);
      if (errorCode !== null) {
        expect(((await res.json()) as { error: { code: string } }).error.code, label).toBe(errorCode);
      }
    }
  });

  it("a session belongs to its credential: a key presenting a token's session id gets 404", async () => {
    const token = (await exchange(await code())).body.access_token as string;
    const res = await initialize(stack.mcpUrl, { authorization: `Bearer ${token}` });
    const session = res.headers.get("mcp-session-id") as string;
    expect(session).toBeTruthy();
    const other = await fetch(stack.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${workspaceKey}`,
        "x-service-group": "app",
        "mcp-session-id": session,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(other.status).toBe(404);
  });
});
