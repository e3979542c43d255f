// Billing in the dashboard, in a real browser: a billing admin (role `billing`) upgrades a
// Starter workspace through the Stripe stand-in's hosted checkout page, comes back to the
// billing page and sees Pro — the webhook already changed the plan, and Pro's features work on
// the next API request. (A `member` sees no billing: the workspace e2e in consent.e2e.test.ts.)
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;

beforeAll(async () => {
  dashboard = await startDashboard("webbilling");
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

describe("the dashboard's billing page", () => {
  it("a billing admin upgrades through Stripe's checkout page and sees Pro at once", { timeout: 60_000 }, async () => {
    const { stack, standin, web, browser } = dashboard;
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
    const page = await dashboard.signedIn(billing, "billing@startup.test", "billing password", ws);
    // The billing role sees no data, no keys: the sidebar offers overview, members, usage and billing.
    const nav = page.getByRole("navigation", { name: "Workspace" });
    await nav.getByRole("link", { name: "Billing" }).waitFor();
    for (const hidden of ["Data", "Keys", "Apps", "Audit", "Settings"]) {
      expect(await page.getByRole("link", { name: hidden, exact: true }).count(), hidden).toBe(0);
    }
    expect((await page.goto(`${web}/w/${ws}/keys`))?.status()).toBe(404);
    await page.goBack();
    await nav.getByRole("link", { name: "Billing" }).click();
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
});
