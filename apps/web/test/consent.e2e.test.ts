// The dashboard in a real browser (Debian's Chromium through Playwright) over the built app
// (`next start`, built by `npm run build`), with apps/api's authorization server and apps/mcp
// (`dashboard-harness.ts`): sign up → a workspace with data → the official SDK client's OAuth
// flow, consent given on the page → the agent's tools are exactly the ones ticked; the same form
// without JavaScript; the workspace page (keys, connected apps, members, data browser, usage);
// no session sends the browser to sign in first. Screenshots at 375 and 1440 px go to
// apps/web/test-results/screenshots.
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createWorkspace } from "@prim/db";
import { KEY_TOOLS, TOOLS } from "@prim/mcp";
import { call, MemoryProvider, type OAuthStack, REDIRECT } from "@prim/testkit/cloud";
import { keyStart } from "@prim/wire";
import type { Browser, BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;
let stack: OAuthStack;
let web: string;
let browser: Browser;
let context: BrowserContext;
/** The Acme workspace's key (made with the workspace in the first test). */
let acmeKey: string;
const email = "ada@acme.test";
const password = "correct horse battery";

beforeAll(async () => {
  dashboard = await startDashboard("webconsent");
  ({ stack, web, browser } = dashboard);
  context = await browser.newContext();
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

const signedIn = (ctx: BrowserContext, who: string, secret: string, workspace: string) =>
  dashboard.signedIn(ctx, who, secret, workspace);

/** Where the client's redirect lands (nothing listens there): the URL, captured in the page. */
async function captureRedirect(page: Page): Promise<{ landed: Promise<URL> }> {
  let resolve: (url: URL) => void = () => {};
  const landed = new Promise<URL>((r) => {
    resolve = r;
  });
  await page.route(`${REDIRECT}**`, async (route) => {
    resolve(new URL(route.request().url()));
    await route.fulfill({ status: 200, contentType: "text/plain", body: "back at the client" });
  });
  return { landed };
}

describe("the dashboard's consent screen", () => {
  it("signs up, then an agent connects with exactly the tools ticked on the page", { timeout: 120_000 }, async () => {
    const page = await context.newPage();
    await page.goto(`${web}/sign-up`);
    await shoot(page, "sign-up");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Create account" }).click();
    // No session until the mailed link is opened (issue 35).
    await page.waitForURL(/\/verify-email\?/);
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    await shoot(page, "verify-email");
    await dashboard.confirmEmail(page, email, password);
    await page.waitForURL(`${web}/`);
    await page.getByRole("heading", { name: "Workspaces" }).waitFor();

    const pool = stack.cloud.api.hub.pool;
    const ws = await createWorkspace(pool, { name: "Acme", plan: "pro", owner: email });
    acmeKey = ws.key;
    await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: "app" });
    await call(stack.cloud.url, ws.key, "POST", "/v1/groups", { name: "ops" });
    const kv = await call(stack.cloud.url, ws.key, "POST", "/v1/primitives", {
      name: "cache",
      type: "kv",
      group: "app",
    });
    await call(stack.cloud.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/greeting`, { value: "hello" });
    await page.reload();
    await shoot(page, "workspaces");

    const agent = new MemoryProvider();
    expect(await auth(agent, { serverUrl: stack.mcpUrl })).toBe("REDIRECT");
    const { landed } = await captureRedirect(page);
    await page.goto((agent.authorizationUrl as URL).href);
    await page.waitForURL(/\/oauth\/consent\//);
    await expect(page.getByRole("heading", { name: "Connect Test Agent" }).isVisible()).resolves.toBe(true);
    await expect(page.getByText("127.0.0.1:9").isVisible()).resolves.toBe(true);
    await shoot(page, "consent");
    await page.getByLabel("Group", { exact: true }).selectOption("app");
    // Tools are in a collapsible section per type.
    await page.getByText("Key-value", { exact: true }).click();
    await page.getByLabel("kv_get").check();
    await page.getByRole("button", { name: "Allow" }).click();
    const back = await landed;
    expect(back.searchParams.get("iss")).toBe(stack.issuer);
    expect(
      await auth(agent, { serverUrl: stack.mcpUrl, authorizationCode: back.searchParams.get("code") as string }),
    ).toBe("AUTHORIZED");
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: agent }));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["kv_get", "primitive_list"]);
    const got = await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "greeting" } });
    expect((got as unknown as { structuredContent: { value: string } }).structuredContent.value).toBe("hello");
    await client.close();
    await page.close();
  });

  it("works without JavaScript, and shows a refused choice on the page", { timeout: 60_000 }, async () => {
    const noScript = await browser.newContext({ javaScriptEnabled: false, storageState: await context.storageState() });
    const page = await noScript.newPage();
    const agent = new MemoryProvider(undefined, "Plain Agent");
    await auth(agent, { serverUrl: stack.mcpUrl });
    const { landed } = await captureRedirect(page);
    await page.goto((agent.authorizationUrl as URL).href);
    await page.waitForURL(/\/oauth\/consent\//);
    // No tool ticked: refused by the server, the reason shown on the screen.
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL(/error=/);
    await expect(page.locator("#consent-error").textContent()).resolves.toMatch(/at least one tool/);
    await shoot(page, "consent-error", { axe: false });
    await page.getByLabel("Group", { exact: true }).selectOption("ops");
    // The type's section opens without JavaScript too (<details>); its select-all posts `kv_*`.
    await page.getByText("Key-value", { exact: true }).click();
    await page.getByLabel("All key-value tools").check();
    await page.getByRole("button", { name: "Allow" }).click();
    const back = await landed;
    expect(back.searchParams.get("code")).toBeTruthy();
    await noScript.close();
  });

  it("refuses `*` and unknown tools posted to the form; the screen's every-tool choice grants every tool", {
    timeout: 60_000,
  }, async () => {
    const page = await context.newPage();
    const agent = new MemoryProvider(undefined, "Every Agent");
    await auth(agent, { serverUrl: stack.mcpUrl });
    const { landed } = await captureRedirect(page);
    await page.goto((agent.authorizationUrl as URL).href);
    await page.waitForURL(/\/oauth\/consent\//);
    const screen = page.url();
    const workspace = await page.getByLabel("Workspace").inputValue();
    // The form posted by hand, as a tampering client would: each refused, back to the screen, nothing signed.
    for (const [tool, reason] of [
      ["*", /stands for every tool/],
      ["kv_nope", /'kv_nope' matches no tool/],
      ["zz_*", /matches no tool/],
    ] as const) {
      const form = new URLSearchParams({ workspace, group: "app", action: "allow" });
      form.append("tools", tool);
      const res = await page.request.post(screen, {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        data: form.toString(),
        maxRedirects: 0,
      });
      expect(res.status(), tool).toBe(303);
      const to = new URL(res.headers().location as string);
      expect(to.href.startsWith(`${screen}?error=`), to.href).toBe(true);
      expect(to.searchParams.get("error")).toMatch(reason);
    }
    // The screen's own choice, on the same interaction.
    await page.getByLabel("Group", { exact: true }).selectOption("app");
    await page.getByLabel("Every tool, including tools added later").check();
    await page.getByRole("button", { name: "Allow" }).click();
    const back = await landed;
    expect(
      await auth(agent, { serverUrl: stack.mcpUrl, authorizationCode: back.searchParams.get("code") as string }),
    ).toBe("AUTHORIZED");
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: agent }));
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([...TOOLS, ...KEY_TOOLS].map((t) => t.name).sort());
    await client.close();
    await page.close();
  });

  it("the workspace page: a scoped key shown once, used, revoked; the app disconnected; a member removed", {
    timeout: 90_000,
  }, async () => {
    const pool = stack.cloud.api.hub.pool;
    const { rows } = await pool.query<{ id: string }>("SELECT id FROM workspaces WHERE name = 'Acme'");
    const workspace = rows[0]?.id as string;
    const bob = await (await import("@prim/db")).createUser(pool, {
      email: "bob@acme.test",
      password: "password123",
      workspace,
      role: "member",
    });
    const page = await context.newPage();
    await page.goto(`${web}/`);
    await page.getByRole("link", { name: "Acme" }).click();
    await page.waitForURL(`${web}/w/${workspace}`);
    const nav = page.getByRole("navigation", { name: "Workspace" });
    await nav.getByRole("link", { name: "Keys" }).click();
    await page.waitForURL(`${web}/w/${workspace}/keys`);

    // A key for group app with kv_get: shown once — the Connect dialog opens with it —, then it
    // works on REST, then revoked (confirmed) it fails.
    await page.getByLabel("Name", { exact: true }).fill("ci key");
    await page.getByLabel("Group", { exact: true }).selectOption("app");
    await page.getByLabel("Tools", { exact: true }).fill("kv_get");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent()) as string;
    expect(key).toMatch(/^pk_/);
    const connect = page.getByRole("dialog", { name: "Connect" });
    await expect(connect.getByTestId("connect-key").textContent()).resolves.toBe(key);
    await page.keyboard.press("Escape");
    await connect.waitFor({ state: "detached" });
    const listed = await call(stack.cloud.url, key, "GET", "/v1/primitives");
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((p: { name: string }) => p.name)).toEqual(["cache"]);
    await page.getByRole("button", { name: `Revoke key ${keyStart(key)}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await page.getByText("revoked", { exact: true }).first().waitFor();
    expect((await call(stack.cloud.url, key, "GET", "/v1/primitives")).status).toBe(401);

    // A read-only key (the form's switch): it reads, its writes are refused, the list badges it.
    await page.getByLabel("Name", { exact: true }).fill("reader");
    await page.getByRole("switch", { name: "Read-only" }).click();
    await page.getByRole("button", { name: "Create key" }).click();
    // The new key replaces the one shown before.
    const shown = page.getByTestId("new-key").filter({ hasNotText: key });
    const reader = (await shown.textContent()) as string;
    expect(reader).toMatch(/^pk_/);
    await page.keyboard.press("Escape");
    await page.getByRole("dialog", { name: "Connect" }).waitFor({ state: "detached" });
    const cache = listed.body.data[0].id as string;
    const read = await call(stack.cloud.url, reader, "GET", `/v1/primitives/${cache}/keys`);
    expect(read.status).toBe(200);
    const write = await call(stack.cloud.url, reader, "PUT", `/v1/primitives/${cache}/keys/ro`, { value: 1 });
    expect([write.status, write.body.error.code]).toEqual([403, "forbidden"]);
    await page.getByRole("listitem").filter({ hasText: "reader" }).getByText("read-only", { exact: true }).waitFor();
    await expect(page.getByRole("switch", { name: "Read-only" }).getAttribute("aria-checked")).resolves.toBe("false");
    await shoot(page, "keys");

    // Disconnect every app (each confirmed): the agents' tokens stop at once.
    await nav.getByRole("link", { name: "Apps" }).click();
    await page.getByText("Test Agent").first().waitFor();
    await shoot(page, "apps");
    const before = await pool.query("SELECT 1 FROM oauth_connections WHERE revoked_at IS NULL");
    expect(before.rowCount).toBeGreaterThan(0);
    // One at a time, each click once the list has dropped the one before (a button clicked
    // twice would disconnect nothing the second time).
    const disconnects = page.getByRole("button", { name: /^Disconnect / });
    for (let left = await disconnects.count(); left > 0; left--) {
      await disconnects.first().click();
      await page.getByRole("dialog").getByRole("button", { name: "Disconnect" }).click();
      await page.getByRole("dialog").waitFor({ state: "detached" });
      await disconnects.nth(left - 1).waitFor({ state: "detached" });
    }
    await page.getByText("No app is connected.").waitFor();
    expect((await pool.query("SELECT 1 FROM oauth_connections WHERE revoked_at IS NULL")).rowCount).toBe(0);

    // The data browser: a new kv primitive in group app, the existing one's keys by prefix.
    const group = `${web}/w/${workspace}/data/app`;
    /** A primitive created on the group's page, then opened (its page; `tab` chosen). */
    const createAndOpen = async (name: string, type: string, tab?: string) => {
      await page.goto(group);
      await page.getByText("New primitive", { exact: true }).waitFor();
      await page.getByLabel("Name", { exact: true }).fill(name);
      await page.getByLabel("Type").selectOption(type);
      await page.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByRole("link", { name, exact: true }).click();
      await page.waitForURL(/\/data\/app\/[^/?]+$/);
      if (tab !== undefined) await page.getByRole("tab", { name: tab }).click();
    };
    await nav.getByRole("link", { name: "Data" }).click();
    await page.getByRole("link", { name: /^app/ }).click();
    await page.waitForURL(group);
    // The group's own form (the groups page before it has one labelled Name too).
    await page.getByText("New primitive", { exact: true }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("scratch");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page
      .getByRole("link", { name: "scratch", exact: true })
      .waitFor()
      .catch(async (err: Error) => {
        // What the page said instead (an error, a toast), for the report.
        throw new Error(`${err.message}\npage: ${(await page.locator("main").innerText()).slice(0, 1500)}`);
      });
    await page.getByRole("link", { name: "cache", exact: true }).click();
    await page.getByLabel("Prefix").fill("gre");
    const keys = page.getByRole("list", { name: "Keys" });
    await keys.getByRole("button", { name: "Edit greeting" }).waitFor();
    await keys.getByText('"hello"').waitFor();
    await page.getByRole("tab", { name: "Settings" }).click();
    await page.getByLabel("Fork as").fill("cache-copy");
    await page.getByRole("button", { name: "Fork", exact: true }).click();
    await page.getByText("Forked as cache-copy").waitFor();
    await page.getByRole("tab", { name: "Snapshots" }).click();
    await page.getByRole("button", { name: "Take snapshot" }).click();
    await page
      .getByRole("button", { name: /^Restore / })
      .first()
      .waitFor();
    await shoot(page, "data");
    // A db primitive and its SQL console.
    await createAndOpen("ledger", "db", "SQL");
    await page.getByRole("textbox", { name: "SQL" }).fill("SELECT 40 + 2 AS answer");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("cell", { name: "42" }).waitFor();
    await shoot(page, "db-console");
    // A storage primitive: a file uploaded through the dashboard (signed PUT), then listed.
    await createAndOpen("files", "storage");
    await page
      .getByLabel("Files", { exact: true })
      .setInputFiles({ name: "hello.txt", mimeType: "text/plain", buffer: Buffer.from("hi") });
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText("Uploaded hello.txt").waitFor();
    await page.getByText("hello.txt", { exact: false }).first().waitFor();
    await shoot(page, "storage");
    // An fs primitive: a file written over REST, previewed in the tree.
    await page.goto(group);
    await page.getByLabel("Name", { exact: true }).fill("docs");
    await page.getByLabel("Type").selectOption("fs");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.getByRole("link", { name: "docs", exact: true }).waitFor();
    const fsList = await call(stack.cloud.url, acmeKey, "GET", "/v1/primitives?type=fs");
    const docsId = fsList.body.data.find((p: { name: string }) => p.name === "docs").id as string;
    const written = await fetch(`${stack.cloud.url}/v1/primitives/${docsId}/files/guide/intro.md`, {
      method: "PUT",
      headers: { authorization: `Bearer ${acmeKey}` },
      body: "# Intro\nWelcome.",
    });
    expect(written.status).toBe(201);
    await page.getByRole("link", { name: "docs", exact: true }).click();
    await page.getByRole("button", { name: "Open folder guide" }).click();
    await page.getByRole("button", { name: "Preview intro.md" }).click();
    await expect(page.getByTestId("file-text").textContent()).resolves.toBe("# Intro\nWelcome.");
    await shoot(page, "fs-preview");
    // Deleting asks for the name, in a dialog.
    await page.goto(group);
    await page.getByRole("button", { name: "Delete scratch" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete scratch?" });
    await dialog.waitFor();
    await shoot(page, "delete-dialog");
    await expect(dialog.getByRole("button", { name: "Delete" }).isDisabled()).resolves.toBe(true);
    await dialog.getByLabel(/to confirm/).fill("scratch");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("link", { name: "scratch", exact: true }).waitFor({ state: "detached" });
    await page.getByText("Deleted scratch").waitFor();
    const audit = await pool.query<{ actor: string }>(
      "SELECT actor FROM audit WHERE workspace_id = $1 AND action = 'primitive.create' ORDER BY ts DESC LIMIT 1",
      [workspace],
    );
    expect(audit.rows[0]?.actor).toMatch(/^user:/);

    // Usage against the plan, and the audit trail (Pro) filtered to the users' own actions.
    await nav.getByRole("link", { name: "Usage" }).click();
    await page.getByText("Operations this month").waitFor();
    await shoot(page, "usage");
    await nav.getByRole("link", { name: "Audit" }).click();
    await page.getByLabel("Actor (e.g. user:*)").fill("user:*");
    await page.getByText("primitive.create").first().waitFor();
    await shoot(page, "audit");

    // Billing: the plan, for owners (and billing admins); a member's link is not there and the page is not found.
    await nav.getByRole("link", { name: "Billing" }).click();
    await page.getByRole("heading", { name: "Acme: pro plan" }).waitFor();
    await shoot(page, "billing");
    const bobs = await browser.newContext();
    const bobPage = await signedIn(bobs, "bob@acme.test", "password123", workspace);
    await bobPage.waitForURL(`${web}/w/${workspace}`);
    await bobPage.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Members" }).waitFor();
    expect(await bobPage.getByRole("link", { name: "Billing" }).count()).toBe(0);
    const refused = await bobPage.goto(`${web}/w/${workspace}/billing`);
    expect(refused?.status()).toBe(404);
    await bobPage.getByRole("heading", { name: "Not found" }).waitFor();
    await shoot(bobPage, "not-found");
    await bobs.close();

    await nav.getByRole("link", { name: "Members" }).click();
    await page.getByRole("button", { name: "Remove bob@acme.test" }).click();
    const removal = page.getByRole("dialog", { name: "Remove bob@acme.test?" });
    await removal.getByRole("button", { name: "Remove" }).click();
    // (While a dialog is open the page behind it is hidden from the accessibility tree.)
    await removal.waitFor({ state: "detached" });
    await page.getByText("bob@acme.test removed").waitFor();
    await page.getByRole("cell", { name: "bob@acme.test" }).waitFor({ state: "detached" });
    expect((await pool.query("SELECT 1 FROM members WHERE user_id = $1", [bob.id])).rowCount).toBe(0);

    // An invitation, mailed (and shown to copy), accepted by the invitee's own new account once
    // its address is confirmed through the mail.
    await page.getByLabel("Email").fill("carol@acme.test");
    await page.getByRole("button", { name: "Send invitation" }).click();
    const link = (await page.getByTestId("invite-link").textContent()) as string;
    expect(link).toMatch(new RegExp(`^${web}/invite/inv_`));
    await page.getByText("We emailed the invitation to carol@acme.test").waitFor();
    const invitation = await dashboard.mail.waitFor((m) => m.to.includes("carol@acme.test"));
    expect(invitation.subject).toBe("ada@acme.test invited you to Acme on Prim");
    expect(invitation.links).toEqual([link]);
    await shoot(page, "members");
    const carol = await browser.newContext();
    const invited = await carol.newPage();
    await invited.goto(`${web}/sign-up?next=${encodeURIComponent(new URL(link).pathname)}`);
    await invited.getByLabel("Email").fill("carol@acme.test");
    await invited.getByLabel("Password").fill("carol's password");
    await invited.getByRole("button", { name: "Create account" }).click();
    await invited.getByRole("heading", { name: "Check your email" }).waitFor();
    await dashboard.confirmEmail(invited, "carol@acme.test", "carol's password");
    await invited.getByRole("heading", { name: "Join Acme" }).waitFor();
    await shoot(invited, "invite");
    await invited.getByRole("button", { name: "Accept invitation" }).click();
    await invited.waitForURL(`${web}/w/${workspace}`);
    await invited
      .locator("[data-sidebar] summary", { hasText: "Switch workspace: Acme" })
      .getByText("pro · member")
      .waitFor();
    await carol.close();

    await nav.getByRole("link", { name: "Settings" }).click();
    await page.getByLabel("Workspace name").fill("Acme Corp");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("navigation", { name: "Breadcrumbs" }).getByText("Acme Corp").waitFor();
    await expect.poll(() => page.title()).toBe("Settings · Acme Corp · Prim");
    await pool.query("UPDATE workspaces SET name = 'Acme' WHERE id = $1", [workspace]);
    await page.close();
  });

  it("sends a browser without a session to sign in first, then back to the screen", { timeout: 60_000 }, async () => {
    const fresh = await browser.newContext();
    const page = await fresh.newPage();
    const agent = new MemoryProvider();
    await auth(agent, { serverUrl: stack.mcpUrl });
    await page.goto((agent.authorizationUrl as URL).href);
    await page.waitForURL(/\/sign-in\?next=/);
    await shoot(page, "sign-in");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("wrong password");
    await page.getByRole("button", { name: "Sign in" }).click();
    const message = page.locator("#form-error");
    await message.waitFor();
    await expect(message.textContent()).resolves.toBe("Wrong email or password.");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/oauth\/consent\//);

    // The password changes with the current one; the new one signs in after.
    await page.goto(`${web}/account`);
    await shoot(page, "account");
    await page.getByLabel("Current password").fill(password);
    await page.getByLabel("New password").fill("a brand new password");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Password changed.").waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${web}/sign-in`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("a brand new password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${web}/`);
    await fresh.close();
  });
});
