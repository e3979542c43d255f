// The Webhooks page (issue 42, item 3) in Chromium over the built app with apps/api delivering
// to a receiver on this machine (PRIM_WEBHOOKS_LOOPBACK=allow): an owner adds an endpoint on
// the page (created by the cell through its internal route: the secret sealed there), sees its
// `whsec_…` secret once, a kv write through the REST API arrives signed with it and shows in the
// endpoint's delivery log, "Redeliver" sends the same message again; the actions are audited as
// `user:<id>`. A member gets neither the page nor the procedures (the owner's endpoint stays);
// another workspace's endpoint id is not found from this one (it stays too); a Starter workspace
// is told webhooks need Pro; the billing page lists what each plan includes.
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import type { Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let dashboard: Dashboard;
let receiver: Server;
const got: Received[] = [];
let hookUrl: string;
let workspace: string;
let key: string;
let ownerId: string;
let starter: string;
let other: { workspace: string; key: string; endpoint: string };
let page: Page;
const password = "a password for hooks";

/** Standard Webhooks, checked with node:crypto alone. */
function genuine(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signed = `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`;
  const want = `v1,${createHmac("sha256", key).update(signed).digest("base64")}`;
  return String(r.headers["webhook-signature"]).split(" ").includes(want);
}

/** A tRPC call over HTTP with the page's session cookie (as a hand-made request would be). */
async function trpc(as: Page, path: string, input: Record<string, unknown>): Promise<number> {
  const res = await as.request.post(`${dashboard.web}/api/trpc/${path}`, { data: { json: input } });
  return res.status();
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/prim`;
  dashboard = await startDashboard("webwebhooks", { env: { PRIM_WEBHOOKS_LOOPBACK: "allow" } });
  const pool = dashboard.stack.cloud.api.hub.pool;
  ownerId = (await createUser(pool, { email: "owner@hooks.test", password })).id;
  const made = await createWorkspace(pool, { name: "Hooks", plan: "pro", ownerId });
  workspace = made.workspace.id;
  key = made.key;
  await createUser(pool, { email: "member@hooks.test", password, workspace, role: "member" });
  starter = (await createWorkspace(pool, { name: "Small", plan: "starter", ownerId, key: false })).workspace.id;
  // Another workspace (another owner) with an endpoint of its own.
  const otherOwner = (await createUser(pool, { email: "other@hooks.test", password })).id;
  const theirs = await createWorkspace(pool, { name: "Theirs", plan: "pro", ownerId: otherOwner });
  await call(dashboard.stack.cloud.url, theirs.key, "POST", "/v1/groups", { name: "app" });
  const endpoint = await call(dashboard.stack.cloud.url, theirs.key, "POST", "/v1/webhooks", {
    url: "https://hooks.invalid/theirs",
    group: "app",
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  other = { workspace: theirs.workspace.id, key: theirs.key, endpoint: endpoint.body.id };
  page = await dashboard.signedIn(await dashboard.browser.newContext(), "owner@hooks.test", password, workspace);
  await page.waitForURL(`${dashboard.web}/w/${workspace}`);
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
  await new Promise((r) => receiver?.close(r));
});

describe("the Webhooks page", () => {
  it("adds an endpoint (secret once), shows a kv write's signed delivery, redelivers it; audited as the user", {
    timeout: 90_000,
  }, async () => {
    const api = dashboard.stack.cloud.url;
    await call(api, key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(api, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body
      .id as string;
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(`${dashboard.web}/w/${workspace}/webhooks`);
    expect(await page.title()).toBe("Webhooks · Hooks · Prim");
    await page.getByLabel("Endpoint URL").fill(hookUrl);
    await page.getByLabel("Primitive").selectOption({ label: "cache (kv)" });
    await page.getByLabel("Types").fill("kv");
    await page.getByLabel("Description").fill("cache invalidation");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await page.getByTestId("new-secret").textContent()) as string;
    expect(secret).toMatch(/^whsec_/);
    const row = page.getByTestId("webhook").filter({ hasText: hookUrl });
    await expect
      .poll(() => row.getByTestId("webhook-subject").textContent())
      .toBe("Primitive cache (kv, group app) · types kv");
    await row.getByTestId("webhook-status").getByText("active", { exact: true }).waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot(page, "webhooks-created");

    // Shown once: not after a reload, nor in any answer of the list.
    await page.reload();
    await row.waitFor();
    expect(await page.getByTestId("new-secret").count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    // A write through the REST API reaches the receiver, signed with that secret.
    expect((await call(api, key, "PUT", `/v1/primitives/${kv}/keys/user:1`, { value: "one" })).status).toBe(200);
    await expect.poll(() => got.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const first = got[0] as Received;
    expect(genuine(secret, first)).toBe(true);
    expect(JSON.parse(first.body).data.change).toMatchObject({ op: "set", key: "user:1" });

    // The delivery log shows it delivered; Redeliver sends the same message again.
    await row.getByRole("button", { name: `Deliveries of ${hookUrl}` }).click();
    const deliveries = row.getByTestId("delivery");
    await expect.poll(() => deliveries.count(), { timeout: 15_000 }).toBe(1);
    await deliveries.first().getByText("delivered", { exact: true }).waitFor();
    expect(await deliveries.first().textContent()).toContain("HTTP 204");
    await deliveries
      .first()
      .getByRole("button", { name: /^Redeliver / })
      .click();
    await expect.poll(() => got.length, { timeout: 20_000 }).toBe(2);
    expect(got[1]?.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
    expect(genuine(secret, got[1] as Received)).toBe(true);
    await expect.poll(() => deliveries.count(), { timeout: 15_000 }).toBe(2);
    await expect.poll(() => deliveries.getByText("delivered", { exact: true }).count(), { timeout: 15_000 }).toBe(2);
    expect(await deliveries.first().textContent()).toContain("redelivery");
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot(page, "webhooks");

    const audit = await call(api, key, "GET", "/v1/audit?type=workspace&action=webhook.");
    const actions = (audit.body.data as { action: string; actor: string }[]).map((e) => `${e.action} ${e.actor}`);
    expect(actions).toEqual(
      expect.arrayContaining([`webhook.create user:${ownerId}`, `webhook.redeliver user:${ownerId}`]),
    );
  });

  it("refuses a member the page and the procedures; the owner's endpoint stays", { timeout: 60_000 }, async () => {
    const id = (await call(dashboard.stack.cloud.url, key, "GET", "/v1/webhooks")).body.data[0].id as string;
    const member = await dashboard.signedIn(
      await dashboard.browser.newContext(),
      "member@hooks.test",
      password,
      workspace,
    );
    await member.waitForURL(`${dashboard.web}/w/${workspace}`);
    expect(await member.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
    expect((await member.goto(`${dashboard.web}/w/${workspace}/webhooks`))?.status()).toBe(404);
    expect(await trpc(member, "webhooks.delete", { workspace, id })).toBe(403);
    expect(await trpc(member, "webhooks.create", { workspace, group: "app", url: hookUrl })).toBe(403);
    expect((await call(dashboard.stack.cloud.url, key, "GET", `/v1/webhooks/${id}`)).status).toBe(200);
    await member.context().close();
  });

  it("does not reach another workspace's endpoint by its id; that one stays", async () => {
    const theirs = { workspace, id: other.endpoint };
    expect(await trpc(page, "webhooks.delete", theirs)).toBe(404);
    expect(await trpc(page, "webhooks.enable", theirs)).toBe(404);
    expect(await trpc(page, "webhooks.redeliver", { ...theirs, delivery: "whd_00000000000000000000000000" })).toBe(404);
    // Named with their workspace, this user is no member there.
    expect(await trpc(page, "webhooks.delete", { workspace: other.workspace, id: other.endpoint })).toBe(404);
    expect((await call(dashboard.stack.cloud.url, other.key, "GET", `/v1/webhooks/${other.endpoint}`)).status).toBe(
      200,
    );
  });

  it("tells a Starter workspace webhooks need Pro; billing lists what each plan includes", async () => {
    await page.goto(`${dashboard.web}/w/${starter}/webhooks`);
    await page.getByText("Webhooks need the Pro plan").waitFor();
    expect(await page.getByRole("link", { name: "Upgrade to Pro" }).getAttribute("href")).toBe(`/w/${starter}/billing`);
    await shoot(page, "webhooks-starter", { widths: [375] });
    await page.goto(`${dashboard.web}/w/${workspace}/billing`);
    await expect.poll(() => page.getByTestId("plan-pro").textContent()).toContain("Change feeds and webhooks");
    expect(await page.getByTestId("plan-starter").textContent()).toContain("Change feeds");
    expect(await page.getByTestId("plan-starter").textContent()).not.toContain("webhooks");
  });

  it("deletes an endpoint after its confirm", async () => {
    await page.goto(`${dashboard.web}/w/${workspace}/webhooks`);
    await page.getByRole("button", { name: `Delete endpoint ${hookUrl}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByText("No endpoints yet.").waitFor();
    expect((await call(dashboard.stack.cloud.url, key, "GET", "/v1/webhooks")).body.data).toEqual([]);
  });
});
