// The usage and audit pages in a real browser (issue 39 items 3 and 5), on one stack: calls made
// through REST (an API key) and MCP (the official SDK client), the meters flushed as the minute's
// roll-up does, then every number of the usage page — operations, storage, primitives, each day,
// the busiest primitives — equals what `prim admin usage --json` prints for the workspace. The
// audit page names its actors (the owner's email, a key's name and start, marked once revoked;
// the operator), marks a failed call with its error code, filters by type and actor in the
// address, pages 50 at a time; both pages are shot (375 and 1440 px; the harness's schemes). The usage route's
// first-load JS (gzip of the scripts the served page names) stays within issue 39's budget.
import { gzipSync } from "node:zlib";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  createKey,
  createUser,
  createWorkspace,
  PLAN_CHANGED_PREFIX,
  planCacheKey,
  REVOKED_CHANNEL,
  revokeKey,
  setPlan,
} from "@prim/db";
import { runPrimCommand } from "@prim/testkit";
import { call } from "@prim/testkit/cloud";
import { keyStart } from "@prim/wire";
import { Redis } from "ioredis";
import type { BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatNumber } from "../src/lib/format";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

const REDIS_URL = "redis://127.0.0.1:6379";
const PASSWORD = "usage owner password";
const EMAIL = "owner@usage.test";
/** Issue 39: a route's first-load JS grows by 30 KiB gzipped at most. */
const FIRST_LOAD_BUDGET_KIB = 30;

let dashboard: Dashboard;
let context: BrowserContext;
let page: Page;
let ws: string;
let key: string;
let ownerId: string;

beforeAll(async () => {
  dashboard = await startDashboard("webusage");
  const pool = dashboard.stack.cloud.api.hub.pool;
  const made = await createWorkspace(pool, { name: "Usage Co", plan: "starter" });
  ws = made.workspace.id;
  key = made.key;
  ownerId = (await createUser(pool, { email: EMAIL, password: PASSWORD, workspace: ws, role: "owner" })).id;
  context = await dashboard.browser.newContext();
  page = await dashboard.signedIn(context, EMAIL, PASSWORD, ws);
  await page.waitForURL(`**/w/${ws}`);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await dashboard?.stop();
});

/** `prim admin usage --workspace <ws> --json`, as an operator runs it against this cloud. */
async function adminUsage(): Promise<{
  operations: number;
  storage_bytes: number;
  primitives: number;
  days: { day: string; operations: number; storage_bytes: number }[];
  top_primitives: { id: string; name: string; group: string; operations: number }[];
}> {
  const env = { ...process.env, DATABASE_URL: dashboard.stack.cloud.databaseUrl, REDIS_URL };
  const res = await runPrimCommand(["admin", "usage", "--workspace", ws, "--json"], env);
  expect(res).toMatchObject({ code: 0, stderr: "" });
  return JSON.parse(res.stdout);
}

/** The page's text cells of a table's body, row by row. */
const tableRows = (name: string) =>
  page
    .getByRole("table", { name })
    .locator("tbody tr")
    .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")));

/** The JavaScript a first load of `path` fetches (every script the HTML names): gzipped KiB, and the code. */
async function firstLoad(path: string): Promise<{ kib: number; code: string }> {
  const html = await (await context.request.get(`${dashboard.web}${path}`)).text();
  const scripts = new Set([...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1] as string));
  expect(scripts.size).toBeGreaterThan(0);
  let bytes = 0;
  let code = "";
  for (const src of scripts) {
    const body = await (await context.request.get(new URL(src, dashboard.web).toString())).body();
    bytes += gzipSync(body).length;
    code += body.toString("utf8");
  }
  return { kib: bytes / 1024, code };
}

describe("the usage page", () => {
  it("shows exactly the figures `prim admin usage` prints, after calls through REST and MCP", {
    timeout: 60_000,
  }, async () => {
    const { stack } = dashboard;
    const api = stack.cloud.url;
    // REST with the workspace's key: creates count nowhere (spec: What counts as an operation).
    await call(api, key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(api, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body.id;
    const queue = (await call(api, key, "POST", "/v1/primitives", { name: "jobs", type: "queue", group: "app" })).body
      .id;
    for (let i = 0; i < 6; i++) {
      expect((await call(api, key, "PUT", `/v1/primitives/${kv}/keys/k${i}`, { value: { i } })).status).toBe(200);
    }
    expect((await call(api, key, "GET", `/v1/primitives/${kv}/keys/k1`)).status).toBe(200);
    // A batch of 3 counts 3.
    const batch = { messages: [{ body: 1 }, { body: 2 }, { body: 3 }] };
    expect((await call(api, key, "POST", `/v1/primitives/${queue}/queues/work/messages/batch`, batch)).status).toBe(
      200,
    );

    // MCP through the official SDK client with the same key: initialize and tools/list count nothing.
    const client = new Client({ name: "usage-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${key}`, "x-service-group": "app" } },
      }),
    );
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    for (const k of ["m1", "m2", "m3"]) {
      const set = await client.callTool({ name: "kv_set", arguments: { primitive: "cache", key: k, value: k } });
      expect(set.isError).toBeFalsy();
    }
    expect(
      (await client.callTool({ name: "kv_get", arguments: { primitive: "cache", key: "m1" } })).isError,
    ).toBeFalsy();
    // A failed call counts too (it was admitted), and its audit entry carries the code.
    const failed = await client.callTool({
      name: "kv_set",
      arguments: { primitive: "cache", key: "m1", value: 0, if_version: 99 },
    });
    expect(failed.isError).toBe(true);
    await client.close();

    // The meters flushed as every minute: storage measured, the day and the primitives rolled up.
    await stack.cloud.api.metering?.measureStorage();
    await stack.cloud.api.metering?.rollUp();
    const cli = await adminUsage();
    expect(cli.operations).toBe(6 + 1 + 3 + 3 + 1 + 1);
    expect(cli.primitives).toBe(2);
    expect(cli.top_primitives.map((p) => [p.group, p.name, p.operations])).toEqual([
      ["app", "cache", 12],
      ["app", "jobs", 3],
    ]);
    expect(cli.storage_bytes).toBeGreaterThan(0);

    await page.goto(`${dashboard.web}/w/${ws}/usage`);
    await expect(page.title()).resolves.toBe("Usage · Usage Co · Prim");
    const figure = (id: string, part = "[data-figure-value]") =>
      page.locator(`[data-figure="${id}"] ${part}`).textContent();
    await page.locator('[data-figure="operations"] [data-figure-value]').waitFor();
    expect(await figure("operations")).toBe(formatNumber(cli.operations));
    expect(await figure("storage", "[data-exact]")).toBe(`${formatNumber(cli.storage_bytes)} bytes`);
    expect(await figure("primitives")).toBe(formatNumber(cli.primitives));
    // Starter's caps beside them, and what happens at one.
    expect(await page.locator('[data-figure="operations"]').textContent()).toContain("of 1,000,000");
    expect(await page.locator('[data-figure="primitives"]').textContent()).toContain("of 100");
    await page.getByText("further calls answer").waitFor();

    // Every day of the month so far: the CLI's days as they are, the others 0.
    await page.getByText("Figures by day", { exact: true }).click();
    const days = await tableRows("Figures by day");
    const today = new Date().toISOString().slice(0, 10);
    expect(days.at(-1)?.[0]).toBe(today);
    const printed = new Map(cli.days.map((d) => [d.day, d]));
    for (const [day, operations, storage] of days) {
      const d = printed.get(day as string);
      expect([operations, storage]).toEqual(
        d === undefined ? ["0", "—"] : [formatNumber(d.operations), formatNumber(d.storage_bytes)],
      );
    }
    expect(days.filter(([day]) => printed.has(day as string))).toHaveLength(cli.days.length);
    await page.getByText("Figures by day", { exact: true }).click(); // folded again

    // The busiest primitives, named and linked to their pages, with the CLI's counts.
    const topTable = page.getByRole("table", { name: "Top primitives by operations" });
    const names = await topTable.getByRole("link").allTextContents();
    const counts = (await tableRows("Top primitives by operations")).map((cells) => cells.at(-1));
    expect(names.map((name, i) => [name, counts[i]])).toEqual(
      cli.top_primitives.map((p) => [`${p.group}/${p.name}`, formatNumber(p.operations)]),
    );
    expect(await page.getByRole("link", { name: "app/cache" }).getAttribute("href")).toBe(`/w/${ws}/data/app/${kv}`);

    // The charts load after the page (their own chunk), drawn from the same days.
    await page.locator(".recharts-bar-rectangle").first().waitFor();
    await page.locator(".recharts-area-dots circle").first().waitFor();
    await shoot(page, "usage-figures");

    // First-load JS: the charting library is not in it (its chunk loads after the page), and the
    // usage page adds at most the 30 KiB to what a plain page of the shell loads.
    const usage = await firstLoad(`/w/${ws}/usage`);
    const members = await firstLoad(`/w/${ws}/members`);
    console.log(`first-load JS gzipped: usage ${usage.kib.toFixed(1)} KiB, members ${members.kib.toFixed(1)} KiB`);
    expect(usage.code).not.toContain("recharts-bar-rectangle");
    expect(usage.kib - members.kib).toBeLessThanOrEqual(FIRST_LOAD_BUDGET_KIB);
  });
});

describe("the audit page", () => {
  it("names actors, marks a revoked key and a failed call, filters in the address", { timeout: 60_000 }, async () => {
    const { stack } = dashboard;
    const pool = stack.cloud.api.hub.pool;
    // Starter cannot read it: the page says so without asking the engine.
    await page.goto(`${dashboard.web}/w/${ws}/audit`);
    await page.getByText("The audit log needs the Pro plan").waitFor();
    const redis = new Redis(REDIS_URL);
    try {
      await setPlan(pool, { workspace: ws, plan: "pro" }, async (w) => {
        await redis.del(planCacheKey(w));
        await redis.publish(REVOKED_CHANNEL, PLAN_CHANGED_PREFIX + w);
      });
    } finally {
      redis.disconnect();
    }
    // The owner makes a named key; it writes once, then is revoked.
    const ci = await createKey(pool, { workspace: ws, name: "ci deploys", createdBy: `user:${ownerId}` });
    const kv = (await call(stack.cloud.url, key, "GET", "/v1/primitives")).body.data.find(
      (p: { name: string }) => p.name === "cache",
    ).id;
    expect((await call(stack.cloud.url, ci.key, "PUT", `/v1/primitives/${kv}/keys/from-ci`, { value: 1 })).status).toBe(
      200,
    );
    await revokeKey(pool, ci.id, async () => {}, ws, `user:${ownerId}`);
    const reader = await createKey(pool, {
      workspace: ws,
      name: "reader",
      readOnly: true,
      createdBy: `user:${ownerId}`,
    });

    await page.goto(`${dashboard.web}/w/${ws}/audit`);
    await expect(page.title()).resolves.toBe("Audit · Usage Co · Prim");
    const entries = page.getByRole("list", { name: "Audit entries" });
    await entries.waitFor();
    // The key's write: its name, its start, revoked.
    const byCi = entries.locator("li", { hasText: "from-ci" });
    await expect(byCi.textContent()).resolves.toContain("ci deploys");
    expect(await byCi.textContent()).toContain(`${keyStart(ci.key)}…`);
    expect(await byCi.textContent()).toContain("revoked");
    // The failed MCP call: marked with its code; the others are not.
    const failed = entries.locator("li[data-failed]");
    expect(await failed.count()).toBe(1);
    expect(await failed.textContent()).toContain("Failed: precondition_failed");
    expect(await entries.locator("li", { hasText: "kv.set" }).count()).toBeGreaterThan(1);
    // The control plane's entries: the owner by email, the operator by word.
    // … and what they acted on by name: the key made and revoked, the plan's change.
    const made = entries.locator("li", { hasText: "key.create" }).filter({ hasText: EMAIL });
    const ciMade = made.filter({ hasText: "ci deploys" });
    expect(await ciMade.textContent()).toContain(`ci deploys (${keyStart(ci.key)}…)`);
    expect(await ciMade.textContent()).not.toContain("read-only");
    // A read-only key says so.
    expect(await made.filter({ hasText: "reader" }).textContent()).toContain(
      `reader (${keyStart(reader.key)}…) · read-only`,
    );
    expect(await entries.locator("li", { hasText: "plan.change" }).textContent()).toContain("starter → pro");
    expect(await entries.locator("li", { hasText: "plan.change" }).textContent()).toContain("Operator (prim admin)");
    // No raw id is shown where a name belongs.
    expect(await entries.textContent()).not.toMatch(/\b(user:|key_|ws_)[A-Za-z0-9_]{6,}/);
    await shoot(page, "audit-names");

    // Type filter: the workspace's own changes only, kept in the address.
    await page.getByLabel("Type").selectOption("workspace");
    await page.waitForURL(/\?type=workspace$/);
    await entries.locator("li", { hasText: "key.revoke" }).waitFor();
    const actions = await entries.locator("li code").allTextContents();
    expect(actions.every((a) => /^(key|plan|member|workspace)\./.test(a))).toBe(true);
    // Actor: clicking a name shows only that actor's entries.
    await page.getByRole("button", { name: EMAIL }).first().click();
    await page.waitForURL(new RegExp(`actor=user%3A${ownerId}`));
    await entries.locator("li", { hasText: "key.revoke" }).waitFor();
    const actors = await entries.locator("li button").allTextContents();
    expect(new Set(actors)).toEqual(new Set([EMAIL]));
    // An action prefix typed in, applied with Enter.
    await page.getByRole("button", { name: "Clear" }).click();
    await page.getByLabel("Action").fill("kv.");
    await page.getByLabel("Action").press("Enter");
    await page.waitForURL(/\?action=kv\.$/);
    await entries.locator("li", { hasText: "kv.get" }).first().waitFor();
    expect((await entries.locator("li code").allTextContents()).every((a) => a.startsWith("kv."))).toBe(true);

    // Paged: 50 entries at a time, then older ones on demand.
    for (let i = 0; i < 30; i++) {
      expect((await call(stack.cloud.url, key, "PUT", `/v1/primitives/${kv}/keys/p${i}`, { value: i })).status).toBe(
        200,
      );
    }
    await page.goto(`${dashboard.web}/w/${ws}/audit`);
    await entries.locator("li", { hasText: "p29" }).waitFor();
    expect(await entries.locator("> li").count()).toBe(50);
    await page.getByRole("button", { name: "Older entries" }).click();
    await entries.locator("li", { hasText: "workspace.create" }).waitFor();
    expect(await entries.locator("> li").count()).toBeGreaterThan(50);
    await expect(page.getByRole("button", { name: "Older entries" }).count()).resolves.toBe(0);
  });
});
