// Secrets by elicitation (issue 40, item 6) in a real browser: an MCP client (the official SDK,
// declaring URL-mode elicitation) calls vault_request_secret on apps/mcp with the workspace's
// key; its elicitation handler opens the URL it is given in Chromium, where the owner, signed in
// to the dashboard, reads who asked and why, types the value and presses Set. The tool call then
// resolves `set: true`, the secret is in the vault with the proposed grant, and the value is in
// no tool result. A member sees the request but cannot answer it; a second request is found in
// the vault's browser and declined. Screenshots light and dark at 375 and 1440 px (with axe's
// checks).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitRequestURLParams } from "@modelcontextprotocol/sdk/types.js";
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import type { BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

const VALUE = "sk_live_elicited_7c1f0e9a2b";
const REASON = "To refund order #1042 <b>now</b> through the payments API.";

let dashboard: Dashboard;
let key: string;
let ws: string;
let vault: string;
let contexts: BrowserContext[] = [];
let owner: Page;
let member: Page;
const clients: Client[] = [];

const rest = (method: string, path: string, body?: unknown) => call(dashboard.stack.cloud.url, key, method, path, body);

/** An MCP session on apps/mcp with the workspace key, group `app`, its elicitations answered by `onUrl`. */
async function mcpClient(onUrl: (params: ElicitRequestURLParams) => void) {
  const client = new Client({ name: "e2e-agent", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    onUrl(request.params as ElicitRequestURLParams);
    return { action: "accept" };
  });
  const transport = new StreamableHTTPClientTransport(new URL(dashboard.stack.mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}`, "x-service-group": "app" } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  dashboard = await startDashboard("websecretrequest");
  const pool = dashboard.stack.cloud.api.hub.pool;
  const made = await createWorkspace(pool, { name: "Shop", plan: "pro" });
  ws = made.workspace.id;
  key = made.key;
  for (const role of ["owner", "member"] as const) {
    await createUser(pool, { email: `${role}@secrets.test`, password: `${role} password`, workspace: ws, role });
  }
  expect((await rest("POST", "/v1/groups", { name: "app" })).status).toBe(201);
  vault = (await rest("POST", "/v1/primitives", { name: "keys", type: "vault", group: "app" })).body.id;
  contexts = await Promise.all([1, 2].map(() => dashboard.browser.newContext()));
  [owner, member] = await Promise.all(
    (["owner", "member"] as const).map(async (role, i) => {
      const p = await dashboard.signedIn(contexts[i] as BrowserContext, `${role}@secrets.test`, `${role} password`, ws);
      await p.waitForURL(`**/w/${ws}`);
      return p;
    }),
  );
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const context of contexts) await context.close();
  await dashboard?.stop();
});

describe("vault_request_secret through the dashboard", () => {
  it("the owner sets the elicited secret in Chromium; the tool call resolves set: true without the value", {
    timeout: 120_000,
  }, async () => {
    let person: Promise<void> | undefined;
    const elicited: ElicitRequestURLParams[] = [];
    const client = await mcpClient((params) => {
      elicited.push(params);
      // The person: opens the URL (signed in), reads the request, types the value, presses Set.
      person = (async () => {
        await owner.goto(params.url);
        await owner.getByText("PAYMENTS_KEY").first().waitFor();
        // The agent's words are shown as text, markup and all.
        await owner.getByText(REASON).waitFor();
        await owner.getByText("api.stripe.com").waitFor();
        // Who asked, named as the audit log names it: the key's name and its start.
        await owner.getByText("workspace key").waitFor();
        // The member's view of the same request: no form, a note to ask an owner or admin.
        await member.goto(params.url);
        await member.getByText("needs an owner or admin").waitFor();
        expect(await member.getByLabel("Value of PAYMENTS_KEY").count()).toBe(0);
        await shoot(owner, "secret-request-pending");
        const field = owner.getByLabel("Value of PAYMENTS_KEY");
        expect(await field.getAttribute("type")).toBe("password");
        expect(await field.getAttribute("autocomplete")).toBe("off");
        await field.fill(VALUE);
        await owner.getByRole("button", { name: "Set secret" }).click();
        await owner.getByText("PAYMENTS_KEY is set (version 1)").waitFor();
        expect(await owner.content()).not.toContain(VALUE);
        await shoot(owner, "secret-request-set");
      })();
    });
    const result = await client.callTool(
      {
        name: "vault_request_secret",
        arguments: {
          primitive: "keys",
          name: "PAYMENTS_KEY",
          reason: REASON,
          allow: { hosts: ["api.stripe.com"], methods: ["POST"] },
        },
      },
      undefined,
      { timeout: 110_000 },
    );
    await person;
    expect(result.isError, JSON.stringify(result)).not.toBe(true);
    expect(result.structuredContent).toMatchObject({ name: "PAYMENTS_KEY", set: true, status: "set", version: 1 });
    expect(JSON.stringify(result)).not.toContain(VALUE);
    expect(elicited).toHaveLength(1);
    expect(elicited[0]?.url).toBe(
      `${dashboard.web}/w/${ws}/secret-requests/${vault}/${(result.structuredContent as { request: string }).request}`,
    );

    // In the vault, with the grant the agent proposed; the REST listing shows no value.
    const secrets = await rest("GET", `/v1/primitives/${vault}/secrets`);
    expect(secrets.body.data).toMatchObject([
      { name: "PAYMENTS_KEY", version: 1, grant: { hosts: ["api.stripe.com"], methods: ["POST"] } },
    ]);
    expect(JSON.stringify(secrets.body)).not.toContain(VALUE);
  });

  it("the owner declines; the call resolves set: false and nothing is stored", { timeout: 60_000 }, async () => {
    let person: Promise<void> | undefined;
    const client = await mcpClient((params) => {
      person = (async () => {
        // Found without the link: the vault's browser lists the requests waiting for an answer.
        await owner.goto(`${dashboard.web}/w/${ws}/data/app/${vault}`);
        await owner.getByText("Requests waiting for an answer").waitFor();
        await shoot(owner, "secret-request-vault-browser");
        await owner.getByRole("link", { name: "Answer the request for OTHER_KEY" }).click();
        await owner.waitForURL(params.url);
        await owner.getByRole("button", { name: "Decline" }).click();
        await owner.getByText("Declined: nothing was stored.").waitFor();
      })();
    });
    const result = await client.callTool(
      { name: "vault_request_secret", arguments: { primitive: "keys", name: "OTHER_KEY", reason: "Just in case." } },
      undefined,
      { timeout: 50_000 },
    );
    await person;
    expect(result.structuredContent).toMatchObject({ name: "OTHER_KEY", set: false, status: "declined" });
    const secrets = await rest("GET", `/v1/primitives/${vault}/secrets`);
    expect(secrets.body.data.map((s: { name: string }) => s.name)).toEqual(["PAYMENTS_KEY"]);
  });
});
