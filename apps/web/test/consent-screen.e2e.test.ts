// The consent screen's choices in a real browser (Debian's Chromium through Playwright) over the
// built dashboard, apps/api's authorization server and apps/mcp (`dashboard-harness.ts`, one
// stack for the file): the read-only preset grants exactly the tools that only read (what
// @prim/wire's catalog declares, checked against the engine's operations in @prim/mcp), and the
// MCP SDK client then sees exactly those, each marked readOnlyHint; a type's select-all grants
// that type's tools (`kv_*`); "Everything in this group" is the every-tool choice; the preset
// without JavaScript (a link the server renders ticked). The read-only box (ticked by the
// read-only preset): the connection can only read whatever its tools, listed so under Connected
// apps, and its token's writes are refused (`forbidden`) while its reads answer.
// Screenshots of the screen, light and dark, at 375 and 1440 px, with axe-core's checks.
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createUser, createWorkspace } from "@prim/db";
import { call, MemoryProvider, type OAuthStack, REDIRECT } from "@prim/testkit/cloud";
import { TOOL_CATALOG } from "@prim/wire";
import type { Browser, BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;
let stack: OAuthStack;
let browser: Browser;
let context: BrowserContext;
const email = "grace@consent.test";
const password = "correct horse battery";

const READ_ONLY_BOX = /^Read-only: the app can only read, whatever tools it has/;
let workspace: string;
let kvId: string;

const READ_TOOLS = TOOL_CATALOG.filter((t) => t.access === "read")
  .map((t) => t.name)
  .sort();

beforeAll(async () => {
  dashboard = await startDashboard("webconsentscreen");
  ({ stack, browser } = dashboard);
  const pool = stack.cloud.api.hub.pool;
  await createUser(pool, { email, password });
  const ws = await createWorkspace(pool, { name: "Acme", plan: "pro", owner: email });
  await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
  const kv = await call(stack.cloud.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
  workspace = ws.workspace.id;
  kvId = kv.body.id;
  await call(stack.cloud.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/greeting`, { value: "hello" });
  context = await browser.newContext();
  const page = await dashboard.signedIn(context, email, password, ws.workspace.id);
  await page.waitForURL(/\/w\//);
  await page.close();
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

/** An agent starting the SDK's OAuth flow, its consent screen open in `page`; `finish` gives the tools it then sees. */
async function connect(page: Page, name: string) {
  const agent = new MemoryProvider(undefined, name);
  expect(await auth(agent, { serverUrl: stack.mcpUrl })).toBe("REDIRECT");
  let resolve: (url: URL) => void = () => {};
  const landed = new Promise<URL>((r) => {
    resolve = r;
  });
  await page.route(`${REDIRECT}**`, async (route) => {
    resolve(new URL(route.request().url()));
    await route.fulfill({ status: 200, contentType: "text/plain", body: "back at the client" });
  });
  await page.goto((agent.authorizationUrl as URL).href);
  await page.waitForURL(/\/oauth\/consent\//);
  /** After Allow: the code exchanged, an MCP SDK client session with the token. */
  const connected = async () => {
    const code = (await landed).searchParams.get("code") as string;
    expect(await auth(agent, { serverUrl: stack.mcpUrl, authorizationCode: code })).toBe("AUTHORIZED");
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: agent }));
    return client;
  };
  return {
    connected,
    /** After Allow: the MCP SDK client's tools (name and readOnlyHint). */
    finish: async () => {
      const client = await connected();
      const { tools } = await client.listTools();
      await client.close();
      return tools.map((t) => [t.name, t.annotations?.readOnlyHint] as const).sort(([a], [b]) => a.localeCompare(b));
    },
  };
}

describe("the consent screen's choices", () => {
  it("the read-only preset grants exactly the read tools; the client sees them, each read-only", {
    timeout: 60_000,
  }, async () => {
    const page = await context.newPage();
    const flow = await connect(page, "Reader Agent");
    await page.getByRole("heading", { name: "Connect Reader Agent" }).waitFor();
    // The real lifetimes of apps/api's tokens, and what disconnecting does.
    await page.getByText("tokens that last 1 hour").waitFor();
    await page.getByText("lasts 30 days").waitFor();
    await page.getByText("its tokens stop working at once").waitFor();
    // "Everything in this group" is the every-tool choice (the tools by type then stand aside);
    // Read-only replaces it.
    await page.getByRole("link", { name: /^Everything in this group/ }).click();
    await expect(page.getByLabel("Every tool, including tools added later").isChecked()).resolves.toBe(true);
    await expect(page.getByLabel("All key-value tools").isDisabled()).resolves.toBe(true);
    await expect(page.getByLabel(READ_ONLY_BOX).isChecked()).resolves.toBe(false);
    await page.getByRole("link", { name: /^Read-only/ }).click();
    await expect(page.getByLabel("Every tool, including tools added later").isChecked()).resolves.toBe(false);
    // The preset ticks the read-only box too: the connection is read-only whatever its tools.
    await expect(page.getByLabel(READ_ONLY_BOX).isChecked()).resolves.toBe(true);
    // Ticked in place (no navigation), each section's count updated.
    expect(page.url()).not.toContain("preset=");
    await page.getByText("2 of 4 chosen").first().waitFor();
    await page.getByRole("button", { name: "Allow" }).click();
    expect(await flow.finish()).toEqual(READ_TOOLS.map((name) => [name, true]));
    await page.close();
  });

  it("a type's select-all grants that type's tools (kv_*), writes included", { timeout: 60_000 }, async () => {
    const page = await context.newPage();
    const flow = await connect(page, "Cache Agent");
    await page.getByText("Key-value", { exact: true }).click();
    await page.getByLabel("All key-value tools").check();
    for (const tool of ["kv_get", "kv_list", "kv_set", "kv_delete"]) {
      await expect(page.getByLabel(tool).isChecked(), tool).resolves.toBe(true);
    }
    await expect(page.getByText("all, and later ones").isVisible()).resolves.toBe(true);
    await shoot(page, "consent-screen");
    // Unticking one tool leaves the rest, and the type is no longer whole.
    await page.getByLabel("kv_delete").uncheck();
    await expect(page.getByLabel("All key-value tools").isChecked()).resolves.toBe(false);
    await page.getByLabel("kv_delete").check();
    await page.getByLabel("All key-value tools").check();
    await page.getByRole("button", { name: "Allow" }).click();
    expect(await flow.finish()).toEqual([
      ["kv_delete", false],
      ["kv_get", true],
      ["kv_list", true],
      ["kv_set", false],
      ["primitive_list", true],
    ]);
    await page.close();
  });

  it("the read-only box: an app granted every key-value tool reads and writes nothing; Connected apps says read-only", {
    timeout: 60_000,
  }, async () => {
    const page = await context.newPage();
    const flow = await connect(page, "Careful Agent");
    await page.getByText("Key-value", { exact: true }).click();
    await page.getByLabel("All key-value tools").check();
    await page.getByLabel(READ_ONLY_BOX).check();
    await page.getByRole("button", { name: "Allow" }).click();
    const client = await flow.connected();
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("kv_set"); // not hidden: refused when called
      const set = await client.callTool({
        name: "kv_set",
        arguments: { primitive: kvId, key: "greeting", value: "x" },
      });
      expect([set.isError, (set.structuredContent as any)?.error?.code]).toEqual([true, "forbidden"]);
      const got = await client.callTool({ name: "kv_get", arguments: { primitive: kvId, key: "greeting" } });
      expect([got.isError ?? false, (got.structuredContent as any)?.value]).toEqual([false, "hello"]);
    } finally {
      await client.close();
    }
    // A page of its own: the consent page may still be on its way to the client's (unreachable)
    // callback, and that navigation would interrupt this one.
    await page.close();
    const apps = await context.newPage();
    await apps.goto(`${dashboard.web}/w/${workspace}/apps`);
    const row = apps.getByRole("row", { name: /Careful Agent/ });
    await row.getByText("read-only").waitFor();
    await expect(
      apps
        .getByRole("row", { name: /Cache Agent/ })
        .getByText("read-only")
        .count(),
    ).resolves.toBe(0);
    await apps.close();
  });

  it("without JavaScript: the preset is a link the server renders ticked, and the form posts it", {
    timeout: 60_000,
  }, async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false, storageState: await context.storageState() });
    const page = await noScript.newPage();
    const flow = await connect(page, "Plain Reader");
    await page.getByRole("link", { name: /^Read-only/ }).click();
    await page.waitForURL(/preset=read-only/);
    for (const tool of READ_TOOLS.filter((t) => t !== "primitive_list")) {
      await expect(page.getByLabel(tool).isChecked(), tool).resolves.toBe(true);
    }
    await expect(page.getByLabel("kv_set").isChecked()).resolves.toBe(false);
    await expect(page.getByLabel(READ_ONLY_BOX).isChecked()).resolves.toBe(true);
    await page.getByRole("button", { name: "Allow" }).click();
    expect((await flow.finish()).map(([name]) => name)).toEqual(READ_TOOLS);
    await noScript.close();
  });
});
