// The dashboard's consent screen in a real browser (Debian's Chromium through Playwright) over
// the built app (`next start`, built by `npm run build`), with apps/api's authorization server
// and apps/mcp: sign up → a workspace with data → the official SDK client's OAuth flow, consent
// given on the page → the agent's tools are exactly the ones ticked; the same form without
// JavaScript; no session sends the browser to sign in first. Screenshots at 375 and 1440 px go
// to apps/web/test-results/screenshots.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createStripe, type StripeStandIn, startStripeStandIn, syncStripe } from "@prim/billing";
import { createUser, createWorkspace } from "@prim/db";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  freePort,
  MemoryProvider,
  type OAuthStack,
  REDIRECT,
  startOAuthStack,
} from "../../mcp/test/oauth-harness.js";

const WEB_DIR = fileURLToPath(new URL("..", import.meta.url));
const SHOTS = join(WEB_DIR, "test-results", "screenshots");
const CHROMIUM = process.env.PRIM_CHROMIUM ?? "/usr/bin/chromium";
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const NEXT_BIN = fileURLToPath(new URL("../../../node_modules/next/dist/bin/next", import.meta.url));

let stack: OAuthStack;
let standin: StripeStandIn;
const WEBHOOK_SECRET = "whsec_e2e_dashboard_billing";
let web: string;
let server: ChildProcess;
let browser: Browser;
let context: BrowserContext;
/** The Acme workspace's key (made with the workspace in the first test). */
let acmeKey: string;
const email = "ada@acme.test";
const password = "correct horse battery";

async function waitFor(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Screenshots at both widths, and axe-core's checks of the page: no serious or critical
 * violation (labels, names, contrast, landmarks). A page without JavaScript is not checked.
 */
async function shoot(page: Page, name: string, options: { axe?: boolean } = {}): Promise<void> {
  if (options.axe !== false) {
    await page.addScriptTag({ path: AXE });
    const found = await page.evaluate(async () => {
      const axe = (
        window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; help: string }[] }> } }
      ).axe;
      return (await axe.run()).violations;
    });
    const serious = found.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(
      serious.map((v) => `${v.id}: ${v.help}`),
      `axe on ${name}`,
    ).toEqual([]);
  }
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    const wide = await page.evaluate(() => {
      const w = document.documentElement.clientWidth;
      return [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > w + 1)
        .slice(0, 3)
        .map((e) => `${e.tagName.toLowerCase()} ${e.textContent?.slice(0, 40) ?? ""}`);
    });
    expect(scrollWidth, `${name} at ${width} px is wider than the screen: ${wide.join(" | ")}`).toBeLessThanOrEqual(
      width,
    );
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

beforeAll(async () => {
  if (!existsSync(join(WEB_DIR, ".next", "BUILD_ID"))) {
    throw new Error("apps/web is not built: run `npm run build` (npm test does it first)");
  }
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium`);
  mkdirSync(SHOTS, { recursive: true });
  const port = await freePort();
  web = `http://127.0.0.1:${port}`;
  standin = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  const stripeEnv = { STRIPE_SECRET_KEY: "sk_test_e2e", STRIPE_API_URL: standin.url };
  stack = await startOAuthStack("webconsent", {
    dashboard: web,
    env: { ...stripeEnv, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET },
  });
  standin.setWebhookUrl(`${stack.cloud.url}/v1/billing/webhook`);
  await syncStripe(createStripe({ secretKey: stripeEnv.STRIPE_SECRET_KEY, apiUrl: standin.url }));
  server = spawn(process.execPath, [NEXT_BIN, "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: WEB_DIR,
    detached: true, // its own process group: next start leaves next-server otherwise
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: stack.cloud.databaseUrl,
      PRIM_INTERNAL_SECRET: stack.secret,
      PRIM_AUTH_URL: stack.issuer,
      PRIM_DASHBOARD_URL: web,
      PRIM_INTERNAL_URL: stack.internalUrl,
      PRIM_PUBLIC_API_URL: stack.cloud.url,
      ...stripeEnv,
    },
  });
  await waitFor(`${web}/sign-in`, 60_000);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
  context = await browser.newContext();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server?.pid !== undefined) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // gone
    }
  }
  await stack?.stop();
  await standin?.close();
});

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
    await page.getByLabel("Group").selectOption("app");
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
    await page.getByLabel("Group").selectOption("ops");
    await page.getByLabel("every kv tool (kv_*)").check();
    await page.getByRole("button", { name: "Allow" }).click();
    const back = await landed;
    expect(back.searchParams.get("code")).toBeTruthy();
    await noScript.close();
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
    await page.getByText("Test Agent").waitFor();
    await shoot(page, "workspace");

    // A key for group app with kv_get: shown once, then it works on REST, then revoked it fails.
    await page.getByLabel("Name", { exact: true }).fill("ci key");
    await page.getByLabel(/^Group/).fill("app");
    await page.getByLabel(/^Tools/).fill("kv_get");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent()) as string;
    expect(key).toMatch(/^pk_/);
    const listed = await call(stack.cloud.url, key, "GET", "/v1/primitives");
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((p: { name: string }) => p.name)).toEqual(["cache"]);
    await page.getByRole("button", { name: `Revoke key ${key.slice(0, 8)}` }).click();
    await page.getByText("revoked").first().waitFor();
    expect((await call(stack.cloud.url, key, "GET", "/v1/primitives")).status).toBe(401);

    // Disconnect every app: the agents' tokens stop at once.
    const before = await pool.query("SELECT 1 FROM oauth_connections WHERE revoked_at IS NULL");
    expect(before.rowCount).toBeGreaterThan(0);
    for (;;) {
      const button = page.getByRole("button", { name: /^Disconnect / }).first();
      if ((await button.count()) === 0) break;
      await button.click();
      await page.waitForTimeout(300);
    }
    await page.getByText("No app is connected.").waitFor();
    expect((await pool.query("SELECT 1 FROM oauth_connections WHERE revoked_at IS NULL")).rowCount).toBe(0);

    // The data browser: a new kv primitive in group app, the existing one's keys by prefix.
    await page.getByRole("link", { name: "Data" }).click();
    await page.getByRole("button", { name: /^app/ }).click();
    await page.getByLabel("Name", { exact: true }).fill("scratch");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("button", { name: "scratch", exact: true }).waitFor();
    await page.getByRole("button", { name: "cache", exact: true }).click();
    await page.getByLabel("Prefix").fill("gre");
    await page.getByRole("cell", { name: "greeting" }).waitFor();
    await expect(page.getByRole("cell", { name: '"hello"' }).isVisible()).resolves.toBe(true);
    await page.getByLabel("Fork as").fill("cache-copy");
    await page.getByRole("button", { name: "Fork", exact: true }).click();
    await page.getByRole("button", { name: "cache-copy", exact: true }).waitFor();
    await page.getByRole("button", { name: "Take snapshot" }).click();
    await page
      .getByRole("button", { name: /^Restore / })
      .first()
      .waitFor();
    await shoot(page, "data");
    // A db primitive and its SQL console.
    await page.getByLabel("Name", { exact: true }).fill("ledger");
    await page.getByLabel("Type").selectOption("db");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("button", { name: "ledger", exact: true }).click();
    await page.getByLabel("SQL").fill("SELECT 40 + 2 AS answer");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("cell", { name: "42" }).waitFor();
    await shoot(page, "db-console");
    // A storage primitive: a file uploaded through the dashboard (signed PUT), then listed.
    await page.getByLabel("Name", { exact: true }).fill("files");
    await page.getByLabel("Type").selectOption("storage");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("button", { name: "files", exact: true }).click();
    await page
      .getByLabel("Upload a file")
      .setInputFiles({ name: "hello.txt", mimeType: "text/plain", buffer: Buffer.from("hi") });
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText("Uploaded hello.txt").waitFor();
    await page.getByText("hello.txt", { exact: false }).first().waitFor();
    await shoot(page, "storage");
    // An fs primitive: a file written over REST, previewed in the tree.
    await page.getByLabel("Name", { exact: true }).fill("docs");
    await page.getByLabel("Type").selectOption("fs");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("button", { name: "docs", exact: true }).waitFor();
    const fsList = await call(stack.cloud.url, acmeKey, "GET", "/v1/primitives?type=fs");
    const docsId = fsList.body.data.find((p: { name: string }) => p.name === "docs").id as string;
    const written = await fetch(`${stack.cloud.url}/v1/primitives/${docsId}/files/guide/intro.md`, {
      method: "PUT",
      headers: { authorization: `Bearer ${acmeKey}` },
      body: "# Intro\nWelcome.",
    });
    expect(written.status).toBe(201);
    await page.getByRole("button", { name: "docs", exact: true }).click();
    await page.getByRole("button", { name: "Open folder guide" }).click();
    await page.getByRole("button", { name: "Preview intro.md" }).click();
    await expect(page.getByTestId("file-text").textContent()).resolves.toBe("# Intro\nWelcome.");
    await shoot(page, "fs-preview");
    // Deleting asks for the name, in a dialog.
    await page.getByRole("button", { name: "Delete scratch" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete scratch?" });
    await dialog.waitFor();
    await shoot(page, "delete-dialog");
    await expect(dialog.getByRole("button", { name: "Delete" }).isDisabled()).resolves.toBe(true);
    await dialog.getByLabel(/to confirm/).fill("scratch");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "scratch", exact: true }).waitFor({ state: "detached" });
    const audit = await pool.query<{ actor: string }>(
      "SELECT actor FROM audit WHERE workspace_id = $1 AND action = 'primitive.create' ORDER BY ts DESC LIMIT 1",
      [workspace],
    );
    expect(audit.rows[0]?.actor).toMatch(/^user:/);
    await page.goBack();

    // Usage against the plan, and the audit trail (Pro) filtered to the users' own actions.
    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByText("Operations this month").waitFor();
    await page.getByLabel("Actor (e.g. user:*)").fill("user:*");
    await page.getByText("primitive.create").first().waitFor();
    await shoot(page, "usage");
    await page.goBack();

    // Billing: the plan, for owners (and billing admins); a member's link is not there and the page is not found.
    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByRole("heading", { name: "Acme: pro plan" }).waitFor();
    await shoot(page, "billing");
    await page.goBack();
    const bobs = await browser.newContext();
    const bobPage = await bobs.newPage();
    await bobPage.goto(`${web}/sign-in?next=${encodeURIComponent(`/w/${workspace}`)}`);
    await bobPage.getByLabel("Email").fill("bob@acme.test");
    await bobPage.getByLabel("Password").fill("password123");
    await bobPage.getByRole("button", { name: "Sign in" }).click();
    await bobPage.getByText("you are member").waitFor();
    expect(await bobPage.getByRole("link", { name: "Billing" }).count()).toBe(0);
    const refused = await bobPage.goto(`${web}/w/${workspace}/billing`);
    expect(refused?.status()).toBe(404);
    await bobPage.getByRole("heading", { name: "Not found" }).waitFor();
    await shoot(bobPage, "not-found");
    await bobs.close();

    await page.getByRole("button", { name: "Remove bob@acme.test" }).click();
    await page.getByText("bob@acme.test").waitFor({ state: "detached" });
    expect((await pool.query("SELECT 1 FROM members WHERE user_id = $1", [bob.id])).rowCount).toBe(0);

    // An invitation link, accepted by the invitee's own new account.
    await page.getByLabel("Email").fill("carol@acme.test");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    const link = (await page.getByTestId("invite-link").textContent()) as string;
    expect(link).toMatch(new RegExp(`^${web}/invite/inv_`));
    await shoot(page, "members");
    const carol = await browser.newContext();
    const invited = await carol.newPage();
    await invited.goto(`${web}/sign-up?next=${encodeURIComponent(new URL(link).pathname)}`);
    await invited.getByLabel("Email").fill("carol@acme.test");
    await invited.getByLabel("Password").fill("carol's password");
    await invited.getByRole("button", { name: "Create account" }).click();
    await invited.getByRole("heading", { name: "Join Acme" }).waitFor();
    await shoot(invited, "invite");
    await invited.getByRole("button", { name: "Accept invitation" }).click();
    await invited.waitForURL(`${web}/w/${workspace}`);
    await invited.getByText("you are member").waitFor();
    await carol.close();

    await page.getByLabel("Workspace name").fill("Acme Corp");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("heading", { name: "Acme Corp" }).waitFor();
    await pool.query("UPDATE workspaces SET name = 'Acme' WHERE id = $1", [workspace]);
    await page.close();
  });

  it("a billing admin upgrades through Stripe's checkout page and sees Pro at once", { timeout: 60_000 }, async () => {
    const pool = stack.cloud.api.hub.pool;
    const made = await createWorkspace(pool, { name: "Startup", plan: "starter" });
    const ws = made.workspace.id;
    await createUser(pool, {
      email: "billing@startup.test",
      password: "billing password",
      workspace: ws,
      role: "billing",
    });
    const billing = await browser.newContext();
    const page = await billing.newPage();
    await page.goto(`${web}/sign-in?next=${encodeURIComponent(`/w/${ws}`)}`);
    await page.getByLabel("Email").fill("billing@startup.test");
    await page.getByLabel("Password").fill("billing password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("you are billing").waitFor();
    // The billing role sees no data, no keys: the workspace page offers usage and billing only.
    expect(await page.getByRole("link", { name: "Data" }).count()).toBe(0);
    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByRole("heading", { name: "Startup: starter plan" }).waitFor();
    await shoot(page, "billing-starter");
    await page.getByRole("button", { name: "Upgrade to Pro" }).click();
    await page.waitForURL(`${standin.url}/checkout/**`);
    await shoot(page, "stripe-checkout", { axe: false });
    await page.getByRole("button", { name: "Pay and subscribe" }).click();
    await page.waitForURL(new RegExp(`^${web}/w/${ws}/billing\\?checkout=success`));
    await page.getByRole("heading", { name: "Startup: pro plan" }).waitFor();
    await page.getByText("Subscription active").waitFor();
    await page.getByText("$25.00 paid").waitFor();
    await shoot(page, "billing-pro");
    const plan = await pool.query("SELECT plan FROM workspaces WHERE id = $1", [ws]);
    expect(plan.rows[0]?.plan).toBe("pro");
    // Pro's features at once: a snapshot (Starter's 403) works with the workspace's key.
    await call(stack.cloud.url, made.key, "POST", "/v1/groups", { name: "app" });
    const kv = await call(stack.cloud.url, made.key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" });
    expect((await call(stack.cloud.url, made.key, "POST", `/v1/primitives/${kv.body.id}/snapshots`, {})).status).toBe(
      201,
    );
    await billing.close();
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
