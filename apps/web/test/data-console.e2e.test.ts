// The editable vault and memory browsers, the db console and the Snapshots tab in a real browser
// (Debian's Chromium through Playwright over the built app, `dashboard-harness.ts`); every
// change made on the page is read back through the REST API with the workspace's key over real
// HTTP. A secret's value never comes back: not in the page, not in any tRPC response.
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import type { BrowserContext } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;
let owner: BrowserContext;
let member: BrowserContext;
let ws: string;
let key: string;
let api: (method: string, path: string, body?: unknown) => ReturnType<typeof call>;
const ids: Record<"vault" | "memory" | "db", string> = { vault: "", memory: "", db: "" };
const OWNER = { email: "owner@lab.test", password: "owner password 1" };
const MEMBER = { email: "member@lab.test", password: "member password 1" };

beforeAll(async () => {
  dashboard = await startDashboard("webconsole");
  const pool = dashboard.stack.cloud.api.hub.pool;
  const made = await createWorkspace(pool, { name: "Lab", plan: "pro" });
  ws = made.workspace.id;
  key = made.key;
  await createUser(pool, { ...OWNER, workspace: ws, role: "owner" });
  await createUser(pool, { ...MEMBER, workspace: ws, role: "member" });
  api = (method, path, body) => call(dashboard.stack.cloud.url, key, method, path, body);
  expect((await api("POST", "/v1/groups", { name: "app" })).status).toBe(201);
  for (const type of ["vault", "memory", "db"] as const) {
    const made = await api("POST", "/v1/primitives", { name: `${type}-one`, type, group: "app" });
    expect(made.status).toBe(201);
    ids[type] = made.body.id;
  }
  owner = await dashboard.browser.newContext();
  member = await dashboard.browser.newContext();
  const both: [BrowserContext, typeof OWNER][] = [
    [owner, OWNER],
    [member, MEMBER],
  ];
  await Promise.all(
    both.map(async ([context, who]) => {
      const page = await dashboard.signedIn(context, who.email, who.password, ws);
      await page.waitForURL(`**/w/${ws}`);
      await page.close();
    }),
  );
}, 120_000);

afterAll(async () => {
  await dashboard?.stop();
});

const open = async (context: BrowserContext, type: keyof typeof ids, tab?: string) => {
  const page = await context.newPage();
  await page.goto(`${dashboard.web}/w/${ws}/data/app/${ids[type]}${tab === undefined ? "" : `?tab=${tab}`}`);
  return page;
};

describe("the data console", () => {
  it("sets, rotates and deletes a secret whose value never comes back", { timeout: 30_000 }, async () => {
    const page = await open(owner, "vault");
    const bodies: Promise<string>[] = [];
    page.on("response", (res) => {
      if (res.url().includes("/api/trpc/")) bodies.push(res.text().catch(() => ""));
    });
    const first = "sk-first-9f3a1c77e2";
    const second = "sk-second-4be0d15a93";
    await page.getByText("No secrets yet").waitFor();
    await page.getByLabel("Secret name").fill("openai_api_key");
    await page.getByLabel("Value", { exact: true }).fill(first);
    await page.getByRole("button", { name: "Save secret" }).click();
    await page.getByText("Saved OPENAI_API_KEY (version 1)").waitFor();
    await page.getByText("v1", { exact: true }).waitFor();
    expect(await page.getByLabel("Value", { exact: true }).inputValue()).toBe("");
    let listed = await api("GET", `/v1/primitives/${ids.vault}/secrets`);
    expect(listed.body.data.map((s: { name: string; version: number }) => [s.name, s.version])).toEqual([
      ["OPENAI_API_KEY", 1],
    ]);
    // A grant made through the API shows beside the name.
    await api("POST", `/v1/primitives/${ids.vault}/grants`, {
      name: "OPENAI_API_KEY",
      allow: { hosts: ["api.openai.com"] },
    });
    await page.reload();
    await page.getByText("api.openai.com").waitFor();
    // Rotate: the same form on the existing name makes version 2.
    await page.getByRole("button", { name: "Rotate OPENAI_API_KEY" }).click();
    await page.getByText("Rotate OPENAI_API_KEY", { exact: true }).waitFor();
    await page.getByLabel("Value", { exact: true }).fill(second);
    await page.getByRole("button", { name: "Save new version" }).click();
    await page.getByText("v2", { exact: true }).waitFor();
    listed = await api("GET", `/v1/primitives/${ids.vault}/secrets`);
    expect(listed.body.data[0]).toMatchObject({ name: "OPENAI_API_KEY", version: 2 });
    await shoot(page, "data-vault");
    // Delete, after typing the name.
    await page.getByRole("button", { name: "Delete OPENAI_API_KEY" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Type OPENAI_API_KEY to confirm").fill("OPENAI_API_KEY");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No secrets yet").waitFor();
    expect((await api("GET", `/v1/primitives/${ids.vault}/secrets`)).body.data).toEqual([]);
    const seen = [await page.content(), ...(await Promise.all(bodies))].join("\n");
    expect(bodies.length).toBeGreaterThan(3);
    expect(seen).not.toContain(first);
    expect(seen).not.toContain(second);
    await page.close();
  });

  it("adds, recalls, supersedes and forgets a memory, and shows its history", { timeout: 30_000 }, async () => {
    const page = await open(owner, "memory");
    await page.getByText("No memories yet").waitFor();
    await page.getByLabel("Memory text").fill("The user drinks oat milk flat whites every morning");
    await page.getByLabel("Tags (comma-separated)").fill("coffee, prefs");
    await page.getByLabel("Metadata (JSON, optional)").fill('{"source": "chat"}');
    await page.getByRole("button", { name: "Remember" }).click();
    const memories = page.getByRole("list", { name: "Memories", exact: true });
    await memories.getByText("The user drinks oat milk flat whites every morning").waitFor();
    let listed = await api("GET", `/v1/primitives/${ids.memory}/memories`);
    expect(listed.body.data).toHaveLength(1);
    const old = listed.body.data[0];
    expect(old).toMatchObject({ kind: "note", tags: ["coffee", "prefs"], metadata: { source: "chat" } });
    // Recall finds it, as the REST recall does.
    await page.getByLabel("Recall query").fill("oat milk");
    await page.getByRole("button", { name: "Recall", exact: true }).click();
    await page.getByRole("list", { name: "Recalled memories" }).getByText("oat milk flat whites").waitFor();
    const recalled = await api("POST", `/v1/primitives/${ids.memory}/recall`, { query: "oat milk" });
    expect(recalled.body.data[0].id).toBe(old.id);
    // Supersede: the old text shown, a new one replaces it.
    await memories.getByRole("button", { name: /^Supersede/ }).click();
    const dialog = page.getByRole("dialog");
    await dialog.locator("blockquote").getByText("The user drinks oat milk flat whites every morning").waitFor();
    await dialog.getByLabel("New text").fill("The user now drinks black coffee");
    await dialog.getByRole("button", { name: "Save new text" }).click();
    await memories.getByText("The user now drinks black coffee").waitFor();
    await memories.getByText("superseded", { exact: true }).waitFor();
    const replaced = await api("GET", `/v1/primitives/${ids.memory}/memories/${old.id}`);
    expect(replaced.body.superseded_by).not.toBeNull();
    const current = await api("GET", `/v1/primitives/${ids.memory}/memories/${replaced.body.superseded_by}`);
    expect(current.body).toMatchObject({ text: "The user now drinks black coffee", supersedes: [old.id] });
    await shoot(page, "data-memory");
    // Forget the new one.
    await memories.getByRole("button", { name: "Forget: The user now drinks black coffee" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Forget" }).click();
    await page.getByText("Memory forgotten").waitFor();
    await memories.getByText("The user now drinks black coffee").waitFor({ state: "detached" });
    expect((await api("GET", `/v1/primitives/${ids.memory}/memories/${current.body.id}`)).status).toBe(404);
    listed = await api("GET", `/v1/primitives/${ids.memory}/memories`);
    expect(listed.body.data.map((m: { id: string }) => m.id)).toEqual([old.id]);
    // The superseded one's history, on demand: made, then superseded.
    await memories.getByRole("button", { name: "History" }).click();
    const versions = memories.getByRole("list", { name: "Versions" });
    await versions.getByText("supersede", { exact: true }).waitFor();
    await versions.getByText("create", { exact: true }).waitFor();
    await page.close();
  });

  it("runs a batch with Ctrl+Enter, shows the schema and typed cells, reuses history; a member only reads", {
    timeout: 40_000,
  }, async () => {
    const page = await open(owner, "db", "sql");
    const editor = page.getByRole("textbox", { name: "SQL" });
    const batch = [
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, extra TEXT, data BLOB);",
      `INSERT INTO notes (body) VALUES ('hello "world"');`,
      "INSERT INTO notes (body, extra, data) VALUES ('it''s; fine', 'x', x'00ff10');",
    ].join("\n");
    await editor.fill(batch);
    await editor.press("Control+Enter");
    await page.getByText("3 statements run in one transaction", { exact: false }).first().waitFor();
    const schema = page.getByRole("list", { name: "Tables and views" });
    await schema.getByRole("button", { name: "notes", exact: true }).waitFor();
    await page.getByRole("list", { name: "Columns of notes" }).getByText("body").waitFor();
    const counted = await api("POST", `/v1/primitives/${ids.db}/query`, { sql: "SELECT count(*) AS n FROM notes" });
    expect(counted.body.rows).toEqual([{ n: 2 }]);

    await editor.fill("SELECT id, body, extra, data FROM notes ORDER BY id");
    await editor.press("Control+Enter");
    const results = page.getByRole("region", { name: "Results" });
    await results.getByRole("cell", { name: 'hello "world"', exact: true }).waitFor();
    await results.getByRole("cell", { name: "it's; fine", exact: true }).waitFor();
    expect(await results.getByRole("cell", { name: "NULL", exact: true }).count()).toBe(2);
    await results.getByRole("cell", { name: "BLOB 3 bytes" }).waitFor();
    const id = results.getByRole("cell", { name: "1", exact: true });
    expect(await id.evaluate((td) => getComputedStyle(td).textAlign)).toBe("right");
    await shoot(page, "data-db-console");
    // History: the batch comes back into the editor.
    await page
      .getByRole("list", { name: "Statements run" })
      .getByRole("button", { name: /^CREATE TABLE notes/ })
      .click();
    expect(await editor.inputValue()).toBe(batch);
    // The Browse tab: the tables, and one's first rows.
    await page.getByRole("tab", { name: "Browse" }).click();
    await page.getByRole("list", { name: "Tables", exact: true }).getByRole("button", { name: "notes" }).click();
    await page.getByRole("region", { name: "Rows of notes" }).getByRole("cell", { name: 'hello "world"' }).waitFor();
    await page.close();

    // A member: read-only, said up front; a write is refused with its code, a read works.
    const memberPage = await open(member, "db", "sql");
    await memberPage.getByText("Read-only: as a member", { exact: false }).waitFor();
    const memberEditor = memberPage.getByRole("textbox", { name: "SQL" });
    await memberEditor.fill("INSERT INTO notes (body) VALUES ('from a member')");
    await memberPage.getByRole("button", { name: "Run" }).click();
    const alert = memberPage.getByRole("alert").filter({ hasText: "The statement failed: forbidden" });
    await alert.getByText("this statement writes", { exact: false }).waitFor();
    await memberEditor.fill("SELECT count(*) AS n FROM notes");
    await memberPage.getByRole("button", { name: "Run" }).click();
    await memberPage.getByRole("cell", { name: "2", exact: true }).waitFor();
    expect(
      (await api("POST", `/v1/primitives/${ids.db}/query`, { sql: "SELECT count(*) AS n FROM notes" })).body.rows,
    ).toEqual([{ n: 2 }]);
    // Nor does a member set secrets (account-only in the engine): a note instead of the form.
    const vault = await open(member, "vault");
    await vault.getByText("needs an owner or admin", { exact: false }).waitFor();
    expect(await vault.getByLabel("Secret name").count()).toBe(0);
    await memberPage.close();
    await vault.close();
  });

  it("takes a named snapshot and restores it after a confirmation", { timeout: 60_000 }, async () => {
    const page = await open(owner, "db", "snapshots");
    const name = page.getByLabel("Snapshot name");
    expect(await name.inputValue()).toMatch(/^\d{4}-\d\d-\d\d-\d\d\.\d\d\.\d\d$/);
    await name.fill("before-cleanup");
    await page.getByRole("button", { name: "Take snapshot" }).click();
    await page.getByText("Snapshot before-cleanup taken").waitFor();
    const snapshots = page.getByRole("list", { name: "Snapshots" });
    await snapshots.getByText("before-cleanup").waitFor();
    const listed = await api("GET", `/v1/primitives/${ids.db}/snapshots`);
    expect(listed.body.data.map((s: { name: string | null }) => s.name)).toEqual(["before-cleanup"]);
    await api("POST", `/v1/primitives/${ids.db}/query`, { sql: "DELETE FROM notes" });
    await shoot(page, "data-snapshots");
    await snapshots.getByRole("button", { name: "Restore before-cleanup" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("everything written since is replaced", { exact: false }).waitFor();
    await dialog.getByRole("button", { name: "Restore" }).click();
    await page.getByText("Restored before-cleanup").waitFor();
    const counted = await api("POST", `/v1/primitives/${ids.db}/query`, { sql: "SELECT count(*) AS n FROM notes" });
    expect(counted.body.rows).toEqual([{ n: 2 }]);
    await page.close();
  });

  it("renders a JavaScript form's submit button disabled: no native submit before the page hydrates", async () => {
    // The page as the server sent it, before (here: without) its script: a click on an enabled
    // button would have sent the form as a GET of the page, the key never made.
    const state = await owner.storageState();
    const bare = await dashboard.browser.newContext({ storageState: state, javaScriptEnabled: false });
    const page = await bare.newPage();
    await page.goto(`${dashboard.web}/w/${ws}/keys`);
    const submit = page.locator('form button[type="submit"]');
    await submit.first().waitFor();
    for (const button of await submit.all()) expect(await button.isDisabled()).toBe(true);
    await bare.close();
    // Hydrated, the same form's button is enabled.
    const live = await owner.newPage();
    await live.goto(`${dashboard.web}/w/${ws}/keys`);
    await live.locator('form button[type="submit"]:enabled').first().waitFor();
    await live.close();
  });

  it("explains Starter's plan_limit on the Snapshots tab", { timeout: 20_000 }, async () => {
    const pool = dashboard.stack.cloud.api.hub.pool;
    const starter = await createWorkspace(pool, { name: "Side project", plan: "starter", owner: OWNER.email });
    const sk = starter.key;
    await call(dashboard.stack.cloud.url, sk, "POST", "/v1/groups", { name: "app" });
    const kv = await call(dashboard.stack.cloud.url, sk, "POST", "/v1/primitives", {
      name: "c",
      type: "kv",
      group: "app",
    });
    const refused = await call(dashboard.stack.cloud.url, sk, "POST", `/v1/primitives/${kv.body.id}/snapshots`, {});
    expect([refused.status, refused.body.error.code]).toEqual([403, "plan_limit"]);
    const page = await owner.newPage();
    await page.goto(`${dashboard.web}/w/${starter.workspace.id}/data/app/${kv.body.id}?tab=snapshots`);
    await page.getByText("Snapshots are part of Pro").waitFor();
    await page.getByText("plan_limit", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "Take snapshot" }).isDisabled()).toBe(true);
    await page.close();
  });
});
