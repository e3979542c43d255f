// The account side of the dashboard in a real browser (Debian's Chromium through Playwright, over
// the built app with apps/api, apps/mcp and the Stripe stand-in: dashboard-harness.ts), one stack
// for the file: an owner deletes a workspace through the Settings page's Danger zone (the
// dialog's button disabled until the name is typed), lands on the workspaces with a toast, the
// workspace gone from the list and its key answering 401 while the owner's other workspace stays;
// an admin sees no Danger zone; after sign-in a browser goes back only to this site
// (`?next=/%5Cevil.test` lands on the workspaces); a forgotten password is reset from the sign-in
// page's link through the mail (the development mail page); the Account page changes the password,
// links the reset by mail and signs out. Screenshots (light and dark, 375 and 1440 px): Settings,
// Account, and the reset's pages (/forgot-password, /dev/mail, /reset-password).
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;
const OWNER = { email: "olga@acme.test", password: "olga's password" };
const ADMIN = { email: "adam@acme.test", password: "adam's password" };
let doomed: { id: string; key: string };
let kept: { id: string; key: string };

beforeAll(async () => {
  dashboard = await startDashboard("webaccount");
  const pool = dashboard.stack.cloud.api.hub.pool;
  const owner = await createUser(pool, OWNER);
  const admin = await createUser(pool, ADMIN);
  for (const [name, slot] of [
    ["Doomed", "doomed"],
    ["Kept", "kept"],
  ] as const) {
    const made = await createWorkspace(pool, { name, ownerId: owner.id });
    const ws = { id: made.workspace.id, key: made.key };
    if (slot === "doomed") doomed = ws;
    else kept = ws;
    expect((await call(dashboard.stack.cloud.url, made.key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
  }
  await pool.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, 'admin')", [kept.id, admin.id]);
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

describe("account", () => {
  it("an admin sees no Danger zone", { timeout: 30_000 }, async () => {
    const context = await dashboard.browser.newContext();
    const page = await dashboard.signedIn(context, ADMIN.email, ADMIN.password, `${kept.id}/settings`);
    await page.waitForURL(`${dashboard.web}/w/${kept.id}/settings`);
    await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    expect(await page.getByRole("heading", { name: "Danger zone" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Delete workspace" }).count()).toBe(0);
    await context.close();
  });

  it("an owner deletes a workspace after typing its name; its key answers 401", { timeout: 40_000 }, async () => {
    const context = await dashboard.browser.newContext();
    const page = await dashboard.signedIn(context, OWNER.email, OWNER.password, `${doomed.id}/settings`);
    await page.waitForURL(`${dashboard.web}/w/${doomed.id}/settings`);
    await page.getByRole("heading", { name: "Danger zone" }).waitFor();
    await shoot(page, "settings");
    await page.getByRole("button", { name: "Delete workspace" }).click();
    const dialog = page.getByRole("alertdialog").or(page.getByRole("dialog"));
    await dialog.getByText("every API key stops working").first().waitFor();
    const confirm = dialog.getByRole("button", { name: "Delete workspace" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByRole("textbox").fill("doomed");
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByRole("textbox").fill("Doomed");
    expect(await confirm.isDisabled()).toBe(false);
    await confirm.click();
    await page.waitForURL(`${dashboard.web}/`);
    await page.getByText("Workspace Doomed deleted").waitFor();
    await page.getByRole("link", { name: "Kept" }).first().waitFor();
    expect(await page.getByRole("link", { name: "Doomed" }).count()).toBe(0);
    const rest = await call(dashboard.stack.cloud.url, doomed.key, "GET", "/v1/groups");
    expect(rest.status).toBe(401);
    expect((await call(dashboard.stack.cloud.url, kept.key, "GET", "/v1/groups")).status).toBe(200);
    await context.close();
  });

  it("sends a browser back only to this site after sign-in (next=/%5Cevil.test)", { timeout: 30_000 }, async () => {
    const context = await dashboard.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${dashboard.web}/sign-in?next=/%5Cevil.test`);
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${dashboard.web}/`);
    await page.getByRole("heading", { name: "Workspaces" }).waitFor();
    await context.close();
  });

  it("resets a forgotten password from the sign-in page's link through the mail", { timeout: 60_000 }, async () => {
    await createUser(dashboard.stack.cloud.api.hub.pool, { email: "dora@acme.test", password: "dora's old password" });
    const context = await dashboard.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${dashboard.web}/sign-in`);
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await page.waitForURL(`${dashboard.web}/forgot-password`);
    await page.getByLabel("Email").fill("dora@acme.test");
    await page.getByRole("button", { name: "Send the link" }).click();
    await page.getByText("If dora@acme.test has a Prim account").waitFor();
    await shoot(page, "forgot-password");
    await dashboard.mail.waitFor((m) => m.to.includes("dora@acme.test"));
    await page.goto(`${dashboard.web}/dev/mail`);
    await page.getByRole("heading", { name: "Reset your Prim password" }).first().waitFor();
    await shoot(page, "dev-mail");
    await page
      .getByRole("link", { name: /\/api\/auth\/reset-password\// })
      .first()
      .click();
    await page.waitForURL(/\/reset-password\?token=/);
    await shoot(page, "reset-password");
    await page.getByLabel("New password", { exact: true }).fill("dora's new password");
    await page.getByRole("button", { name: "Set password" }).click();
    await page.getByText("Password changed").waitFor();
    // Signed in with the new password, the Account page: reset by mail, change, sign out.
    await page.goto(`${dashboard.web}/sign-in?next=/account`);
    await page.getByLabel("Email").fill("dora@acme.test");
    await page.getByLabel("Password").fill("dora's new password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${dashboard.web}/account`);
    await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
    expect(await page.getByRole("link", { name: /reset .*by mail/i }).getAttribute("href")).toBe("/forgot-password");
    await shoot(page, "account");
    await page.getByLabel("Current password").fill("dora's new password");
    await page.getByLabel("New password").fill("dora's third password");
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Password changed").waitFor();
    await page.getByRole("main").getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in/);
    await context.close();
  });
});
