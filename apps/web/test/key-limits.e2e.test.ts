// Keys for agents on the Keys page (issue 41, item 1) in a real browser (Debian's Chromium through
// Playwright) over the built app with apps/api (dashboard-harness.ts): the create form's expiry,
// IP allowlist and budget make a key the API holds to them — two metered calls admitted, the
// third refused naming the budget, while the workspace's other key goes on — and the list shows
// the limits. A malformed CIDR is refused in the form, nothing made.
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;
let workspace: string;
let accountKey: string;
let page: Page;
const email = "agents@acme.test";
const password = "a password for agents";

beforeAll(async () => {
  dashboard = await startDashboard("webkeylimits");
  const pool = dashboard.stack.cloud.api.hub.pool;
  const userId = (await createUser(pool, { email, password })).id;
  const made = await createWorkspace(pool, { name: "Agents", plan: "pro", ownerId: userId });
  workspace = made.workspace.id;
  accountKey = made.key;
  page = await dashboard.signedIn(await dashboard.browser.newContext(), email, password, workspace);
  await page.waitForURL(`${dashboard.web}/w/${workspace}`);
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

describe("the Keys page's limits for agents", () => {
  it("creates a key with an expiry, an IP allowlist and a budget; the API holds it to them; the list shows them", {
    timeout: 60_000,
  }, async () => {
    const api = dashboard.stack.cloud.url;
    await call(api, accountKey, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(api, accountKey, "POST", "/v1/primitives", { name: "state", type: "kv", group: "app" })).body
      .id as string;
    await page.goto(`${dashboard.web}/w/${workspace}/keys`);
    // A malformed CIDR: the error is shown, no key is made.
    await page.getByLabel("Name", { exact: true }).fill("bad-ip");
    await page.getByLabel("IP allowlist").fill("10.0.0.0/99");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("10.0.0.0/99").last().waitFor();
    expect(await page.getByTestId("new-key").count()).toBe(0);

    await page.getByLabel("Name", { exact: true }).fill("sub-agent");
    await page.getByLabel("Expires").selectOption({ label: "In 1 day" });
    await page.getByLabel("IP allowlist").fill("127.0.0.0/8, ::1/128");
    await page.getByLabel("Budget (operations)").fill("2");
    await page.getByLabel("Budget period").selectOption({ label: "In total" });
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent()) as string;
    expect(key).toMatch(/^pk_/);
    await page.getByRole("dialog", { name: "Connect" }).waitFor();
    await page.keyboard.press("Escape");

    const get = (k: string) => call(api, k, "GET", `/v1/primitives/${kv}/keys/a`);
    expect((await get(key)).status).toBe(404);
    expect((await get(key)).status).toBe(404);
    const spent = await get(key);
    expect(spent.status).toBe(403);
    expect(spent.body.error.message).toContain("budget of 2 operations");
    expect((await get(accountKey)).status).toBe(404);

    const limits = page.locator("li", { hasText: "sub-agent" }).getByTestId("key-limits");
    await expect.poll(() => limits.textContent()).toContain("IP 127.0.0.0/8, ::1/128");
    expect(await limits.textContent()).toContain("Budget 2 operations");
    expect(await limits.textContent()).toMatch(/Expires /);
  });
});
