// The tools a consent grants: each name or pattern must match at least one tool of the catalog,
// and a pattern that stands for every tool (`*`) is refused in the list — every tool is the
// screen's own choice (`every_tool=yes`), which grants `*`. Submitted as the dashboard's form is
// (urlencoded POST), a refusal answers 400 and signs nothing; the same interaction then goes on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createUser, createWorkspace, listConnections } from "@prim/db";
import { KEY_TOOLS, TOOLS } from "@prim/mcp";
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
} from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let stack: OAuthStack;
let workspace: string;
let alice: string;

beforeAll(async () => {
  stack = await startOAuthStack("oauthtools");
  const pool = stack.cloud.api.hub.pool;
  const ws = await createWorkspace(pool, { name: "Acme", plan: "pro" });
  workspace = ws.workspace.id;
  alice = (await createUser(pool, { email: "alice@acme.test", password: "correct horse 1", workspace })).id;
  await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** A fresh authorization as alice, up to the consent screen. */
async function atConsent() {
  const clientId = await registerClient(stack);
  const { verifier, challenge } = pkce();
  const browser = new Browser({ [new URL(stack.dashboard).host]: { user: alice } });
  const page = await browser.follow(authorizeUrl(stack, clientId, challenge).href, `${stack.dashboard}/oauth/consent/`);
  if (!(page instanceof URL)) throw new Error(`no consent page: ${page.status}`);
  return { clientId, verifier, browser, page };
}

const allow = (fields: { tools?: string[]; everyTool?: boolean }) =>
  consentForm({ workspace, group: "app", action: "allow", ...fields });

describe("the tools a consent grants", () => {
  it("refuses `*`, unknown names and patterns matching nothing with 400; a real choice then goes through", async () => {
    const { browser, page } = await atConsent();
    const cases: [string[], RegExp][] = [
      [["*"], /every tool/],
      [["**"], /every tool/],
      [["*_*"], /every tool/],
      [["kv_get", "kv_nope"], /'kv_nope' matches no tool/],
      [["zz_*"], /'zz_\*' matches no tool/],
      [["DROP TABLE"], /not a tool name or pattern/],
    ];
    for (const [tools, message] of cases) {
      const res = await browser.request(page.href, allow({ tools }));
      expect(res.status, tools.join(",")).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.message).toMatch(message);
    }
    // The same interaction, with names and a pattern of the catalog: signed, on to the server.
    const ok = await browser.request(page.href, allow({ tools: ["kv_get", "db_*"] }));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toMatch(/\/interaction\/[^/]+\/complete\?result=/);
  });

  it("the screen's every-tool choice grants `*`: the agent sees every tool", async () => {
    const { clientId, verifier, browser, page } = await atConsent();
    const back = await browser.follow(page.href, REDIRECT, allow({ everyTool: true }));
    if (!(back instanceof URL)) throw new Error(`consent: ${back.status} ${await back.text()}`);
    const token = await exchangeCode(stack, { clientId, verifier, code: back.searchParams.get("code") as string });
    expect(token.status).toBe(200);
    const connection = (await listConnections(stack.cloud.api.hub.pool, workspace)).find(
      (c) => c.client_id === clientId,
    );
    expect(connection?.tools).toEqual(["*"]);
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${token.body.access_token}` } },
      }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    // Every tool apps/mcp serves, the key tools included (an OAuth token's calls of them are refused: key-tools.test.ts).
    expect(names).toEqual([...TOOLS, ...KEY_TOOLS].map((t) => t.name).sort());
    await client.close();
  });
});
