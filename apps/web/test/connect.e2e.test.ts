// Connect (issue 39 item 2) in a real browser (Debian's Chromium through Playwright) over the
// built app with apps/api and apps/mcp (dashboard-harness.ts): a fresh user's empty workspace
// shows the next steps; a key created on the Keys page opens the Connect dialog with it; the
// curl snippet, as the page shows it, runs in a shell against the real API; the Cursor config,
// as shown, connects the official MCP SDK client (its URL and headers) which lists the tools and
// calls primitive_list; the OAuth variant's URL is the resource the authorization server issues
// tokens for. Screenshots (light and dark, 375 and 1440 px) of the Overview and the dialog (the
// Keys page's: layout.e2e.test.ts).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createUser, createWorkspace } from "@prim/db";
import type { OAuthStack } from "@prim/testkit/cloud";
import { RemoteInvoker } from "@prim/wire/invoke";
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userPrincipal } from "../src/server/trpc/init";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

const run = promisify(execFile);
let dashboard: Dashboard;
let stack: OAuthStack;
let workspace: string;
let page: Page;
let userId: string;
const email = "newcomer@acme.test";
const password = "a fresh password";

beforeAll(async () => {
  dashboard = await startDashboard("webconnect");
  stack = dashboard.stack;
  const pool = stack.cloud.api.hub.pool;
  userId = (await createUser(pool, { email, password })).id;
  workspace = (await createWorkspace(pool, { name: "Fresh", ownerId: userId, key: false })).workspace.id;
  page = await dashboard.signedIn(await dashboard.browser.newContext(), email, password, workspace);
  await page.waitForURL(`${dashboard.web}/w/${workspace}`);
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

/** The text of a snippet in the open dialog (its <pre>, as a reader would copy it). */
const snippet = (testId: string) => page.getByTestId(testId).locator("pre").innerText();

describe("connecting from the dashboard", () => {
  it("shows an empty workspace's next steps, and how to connect before any key", { timeout: 30_000 }, async () => {
    const steps = page.getByRole("list", { name: "Next steps" });
    await steps.getByText("Create a group (to do)").waitFor();
    await steps.getByText("Create an API key (to do)").waitFor();
    await steps.getByText("Connect an agent (to do)").waitFor();
    await expect(page.title()).resolves.toMatch(/Fresh/);
    await shoot(page, "overview-empty");

    await page.getByRole("button", { name: "Show how to connect" }).click();
    const dialog = page.getByRole("dialog", { name: "Connect" });
    await dialog.getByText("No group yet").waitFor();
    expect(await snippet("connect-curl")).toContain("Authorization: Bearer pk_…");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    // A group with a primitive (as the data page would make them): the first step is done.
    const invoker = new RemoteInvoker({ url: stack.internalUrl, secret: stack.secret });
    const owner = userPrincipal({ id: userId }, workspace, "owner");
    await invoker.invoke(owner, "group.create", null, { name: "app" });
    await invoker.invoke(owner, "primitive.create", null, { name: "notes", type: "kv", group: "app" });
    await page.reload();
    await steps.getByText("Create a group (done)").waitFor();
  });

  it("opens Connect with a new key, whose snippets work as shown: curl, MCP with a key, OAuth's URL", {
    timeout: 40_000,
  }, async () => {
    await page.goto(`${dashboard.web}/w/${workspace}/keys`);
    await page.getByLabel("Name", { exact: true }).fill("agent");
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Connect" });
    const key = (await dialog.getByTestId("connect-key").innerText()).trim();
    expect(key).toMatch(/^pk_/);
    expect((await page.getByTestId("new-key").innerText()).trim()).toBe(key);
    await dialog.getByLabel("Group").selectOption("app");

    // curl, exactly as shown, in a shell: 200 with the group's primitive.
    const curl = await snippet("connect-curl");
    expect(curl).toContain(key);
    const { stdout } = await run("sh", ["-c", `${curl.trimEnd()} -w '\\n%{http_code}'`]);
    const [body, status] = [stdout.slice(0, stdout.lastIndexOf("\n")), stdout.slice(stdout.lastIndexOf("\n") + 1)];
    expect(status).toBe("200");
    expect((JSON.parse(body) as { data: { name: string }[] }).data.map((p) => p.name)).toEqual(["notes"]);

    // The Cursor config with the key: its URL and headers connect the official MCP client.
    await dialog.getByRole("tab", { name: "Cursor" }).click();
    await shoot(page, "connect-dialog");
    const cursor = JSON.parse(await snippet("connect-cursor-key")) as {
      mcpServers: { prim: { url: string; headers: Record<string, string> } };
    };
    const { url, headers } = cursor.mcpServers.prim;
    expect(url).toBe(stack.mcpUrl);
    expect(headers).toEqual({ Authorization: `Bearer ${key}`, "X-Service-Group": "app" });
    const client = new Client({ name: "cursor-as-shown", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("primitive_list");
    expect(tools).toContain("kv_get");
    const listed = await client.callTool({ name: "primitive_list", arguments: {} });
    expect(JSON.stringify(listed)).toContain("notes");
    await client.close();

    // The OAuth variant: no secret, and the URL is the MCP resource tokens are issued for.
    const oauth = JSON.parse(await snippet("connect-cursor-oauth")) as {
      mcpServers: { prim: Record<string, unknown> };
    };
    expect(oauth.mcpServers.prim).toEqual({ url: stack.mcpUrl });
    const metadata = await fetch(`${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`);
    expect(((await metadata.json()) as { resource: string }).resource).toBe(oauth.mcpServers.prim.url);
    await dialog.getByRole("tab", { name: "VS Code" }).click();
    expect(await snippet("connect-vscode-key")).not.toContain(key);
    await page.keyboard.press("Escape");

    // The keys list names the creator by email; the key has been used.
    await page.reload();
    const row = page.getByRole("listitem").filter({ hasText: "agent" });
    await row.getByText(`By ${email}`).waitFor();
  });

  it("checks off every step once an agent has used a key", { timeout: 20_000 }, async () => {
    // `last_used_at` is written off the request path: the page is read again until it shows.
    for (let attempt = 0; ; attempt++) {
      await page.goto(`${dashboard.web}/w/${workspace}`);
      await page.getByRole("heading", { name: "Fresh" }).waitFor();
      await page.getByText("Operations this month").waitFor();
      if ((await page.getByRole("list", { name: "Next steps" }).count()) === 0) break;
      expect(attempt, "the next steps are still shown after the key was used").toBeLessThan(20);
      await new Promise((r) => setTimeout(r, 250));
    }
    await shoot(page, "overview");

    // The billing role sees no data: no counts, no Connect, its own pages to open.
    await createUser(stack.cloud.api.hub.pool, { email: "payer@acme.test", password, workspace, role: "billing" });
    const payer = await dashboard.signedIn(
      await dashboard.browser.newContext(),
      "payer@acme.test",
      password,
      workspace,
    );
    await payer.getByRole("link", { name: "Open billing" }).waitFor();
    expect(await payer.getByRole("button", { name: "Connect" }).count()).toBe(0);
    expect(await payer.getByText("Operations this month").count()).toBe(0);
    await payer.context().close();
  });
});
