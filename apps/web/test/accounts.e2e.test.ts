// Account pages of the dashboard in a real browser (Debian's Chromium through Playwright, over
// the built app: dashboard-harness.ts): after sign-in a browser goes back only to this site
// (`?next=/%5Cevil.test` lands on the workspaces); a forgotten password is reset through the
// mailed link, read on the development mail page. Screenshots at 375 and 1440 px.
import { createUser } from "@prim/db";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;

beforeAll(async () => {
  dashboard = await startDashboard("webaccounts");
  await createUser(dashboard.stack.cloud.api.hub.pool, { email: "erin@acme.test", password: "erin's password" });
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

describe("the dashboard's account pages", () => {
  it("sends a browser back only to this site after sign-in (next=/%5Cevil.test)", { timeout: 60_000 }, async () => {
    const fresh = await dashboard.browser.newContext();
    const page = await fresh.newPage();
    await page.goto(`${dashboard.web}/sign-in?next=/%5Cevil.test`);
    await page.getByLabel("Email").fill("erin@acme.test");
    await page.getByLabel("Password").fill("erin's password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${dashboard.web}/`);
    await page.getByRole("heading", { name: "Workspaces" }).waitFor();
    await fresh.close();
  });

  it("resets a forgotten password through the mail (read on the development mail page)", {
    timeout: 60_000,
  }, async () => {
    await createUser(dashboard.stack.cloud.api.hub.pool, {
      email: "dora@acme.test",
      password: "dora's old password",
    });
    const fresh = await dashboard.browser.newContext();
    const page = await fresh.newPage();
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
    await page.goto(`${dashboard.web}/sign-in`);
    await page.getByLabel("Email").fill("dora@acme.test");
    await page.getByLabel("Password").fill("dora's new password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${dashboard.web}/`);
    await fresh.close();
  });
});
