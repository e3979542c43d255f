// The editable data browser in a real browser (kv, fs, queue, storage): each type's edits made
// on the page and checked through the REST API with the workspace's key (real HTTP); invalid
// JSON refused on the page with nothing written; a member edits kv, a billing user sees no data
// pages. Screenshots of each browser, light and dark, at 375 and 1440 px (with axe's checks).
import { createUser, createWorkspace } from "@prim/db";
import { call } from "@prim/testkit/cloud";
import type { BrowserContext, Page } from "playwright";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dashboard, shoot, startDashboard } from "./dashboard-harness.js";

let dashboard: Dashboard;
let api: string;
let key: string;
let ws: string;
const ids: Record<"kv" | "fs" | "queue" | "storage", string> = { kv: "", fs: "", queue: "", storage: "" };
let contexts: BrowserContext[] = [];
/** The owner's page; the member's and the billing user's (all signed in at the start, together). */
let page: Page;
let memberPage: Page;
let billingPage: Page;

const rest = (method: string, path: string, body?: unknown) => call(api, key, method, path, body);
const on = (type: keyof typeof ids, path: string) => `/v1/primitives/${ids[type]}${path}`;
const open = (type: keyof typeof ids, p: Page = page) => p.goto(`${dashboard.web}/w/${ws}/data/app/${ids[type]}`);

/** The browser's current view, light and dark, at both widths (with axe in both). */
const shots = (name: string) => shoot(page, `data-${name}`);

beforeAll(async () => {
  dashboard = await startDashboard("webdatabrowser");
  api = dashboard.stack.cloud.url;
  const pool = dashboard.stack.cloud.api.hub.pool;
  const made = await createWorkspace(pool, { name: "Lab", plan: "pro" });
  ws = made.workspace.id;
  key = made.key;
  for (const role of ["owner", "member", "billing"] as const) {
    await createUser(pool, { email: `${role}@data.test`, password: `${role} password`, workspace: ws, role });
  }
  expect((await rest("POST", "/v1/groups", { name: "app" })).status).toBe(201);
  for (const type of ["kv", "fs", "queue", "storage"] as const) {
    const made = await rest("POST", "/v1/primitives", { name: `my-${type}`, type, group: "app" });
    ids[type] = made.body.id;
  }
  contexts = await Promise.all([1, 2, 3].map(() => dashboard.browser.newContext()));
  [page, memberPage, billingPage] = await Promise.all(
    (["owner", "member", "billing"] as const).map(async (role, i) => {
      const p = await dashboard.signedIn(contexts[i] as BrowserContext, `${role}@data.test`, `${role} password`, ws);
      await p.waitForURL(`**/w/${ws}`);
      return p;
    }),
  );
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await dashboard?.stop();
});

describe("the data browser", () => {
  it("kv: adds, edits (invalid JSON refused, nothing written), pages and deletes keys", {
    timeout: 60_000,
  }, async () => {
    // 120 keys: the list shows a page, "Load more" the next.
    for (const start of [0, 100]) {
      const items = Array.from({ length: start === 0 ? 100 : 20 }, (_, i) => ({
        key: `bulk:${String(start + i).padStart(3, "0")}`,
        value: { n: start + i },
      }));
      expect((await rest("POST", on("kv", "/mset"), { items })).status).toBe(200);
    }
    await open("kv");
    await page.getByText("bulk:049").waitFor();
    expect(await page.getByText("bulk:050").count()).toBe(0);
    await page.getByRole("button", { name: "Load more" }).click();
    await page.getByText("bulk:050").waitFor();
    await page.getByLabel("Prefix").fill("user:");
    await page.getByText("No keys start with").waitFor();
    await page.getByRole("button", { name: "Add key" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Key").fill("user:1");
    await dialog.getByLabel("Value (JSON)").fill('{"name": "Ada", "tags": ["a"]}');
    await dialog.getByText("Valid JSON (object)").waitFor();
    await dialog.getByRole("button", { name: "Add key" }).click();
    await page.getByText("Added user:1").waitFor();
    expect((await rest("GET", on("kv", "/keys/user:1"))).body).toMatchObject({
      value: { name: "Ada", tags: ["a"] },
      expires_at: null,
    });
    // Invalid JSON: the error with its position, the save refused, nothing written.
    await page.getByRole("button", { name: "Edit user:1" }).click();
    await dialog.getByLabel("Value (JSON)").fill('{"name": "Ada",\n  "tags": [a]}');
    await dialog.getByText("Invalid JSON at line 2, column 12").waitFor();
    expect(await dialog.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await dialog.getByLabel("Value (JSON)").press("Control+Enter");
    expect((await rest("GET", on("kv", "/keys/user:1"))).body).toMatchObject({ value: { name: "Ada" }, version: 1 });
    await dialog.getByLabel("Value (JSON)").fill('{"name":"Grace"}');
    await dialog.getByLabel("Expires after (seconds)").fill("3600");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved user:1").waitFor();
    const edited = (await rest("GET", on("kv", "/keys/user:1"))).body;
    expect(edited.value).toEqual({ name: "Grace" });
    expect(edited.expires_at).toBeGreaterThan(Date.now() + 3_500_000);
    await page.getByText(/expires in (60 minutes|1 hour)/).waitFor();
    await shots("kv");
    await page.getByRole("button", { name: "Delete user:1" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("Deleted user:1").waitFor();
    expect((await rest("GET", on("kv", "/keys/user:1"))).status).toBe(404);
    await page.getByText("No keys start with").waitFor();
  });

  it("fs: makes a folder, writes a file, moves it, and deletes the non-empty folder after saying so", {
    timeout: 60_000,
  }, async () => {
    await open("fs");
    await page.getByText("No files yet").waitFor();
    await page.getByRole("button", { name: "New folder" }).click();
    await page.getByRole("dialog").getByLabel("Folder name").fill("docs");
    await page.getByRole("dialog").getByRole("button", { name: "Create folder" }).click();
    await page.getByRole("button", { name: "Open folder docs" }).click();
    await page.getByRole("button", { name: "New file" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("File name").fill("readme.md");
    await dialog.getByLabel("Contents").fill("# Docs\nhello\n");
    await dialog.getByRole("button", { name: "Create file" }).click();
    await page.getByText("Saved /docs/readme.md").waitFor();
    expect(await raw(on("fs", "/files/docs/readme.md"))).toBe("# Docs\nhello\n");
    await page.getByTestId("file-text").getByText("hello").waitFor();
    await shots("fs");
    await page.getByRole("button", { name: "Move readme.md" }).click();
    await dialog.getByLabel("New path").fill("/docs/guide.md");
    await dialog.getByRole("button", { name: "Move" }).click();
    await page.getByText("Moved to /docs/guide.md").waitFor();
    expect((await rest("GET", on("fs", "/files/docs/readme.md?stat=1"))).status).toBe(404);
    expect(await raw(on("fs", "/files/docs/guide.md"))).toBe("# Docs\nhello\n");
    // The preview followed the move; the folder is not empty: fs_conflict, then its name typed.
    await page.getByRole("region", { name: "Preview of /docs/guide.md" }).waitFor();
    await page.getByRole("button", { name: "/", exact: true }).click();
    await page.getByRole("button", { name: "Delete docs" }).click();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await dialog.getByText("fs_conflict: /docs is not empty").waitFor();
    expect((await rest("GET", on("fs", "/files/docs/guide.md?stat=1"))).status).toBe(200);
    await dialog.getByLabel("Type docs to confirm").fill("docs");
    await dialog.getByRole("button", { name: "Delete everything" }).click();
    await page.getByText("Deleted /docs").waitFor();
    expect((await rest("GET", on("fs", "/files/docs?stat=1"))).status).toBe(404);
    await page.getByText("No files yet").waitFor();
  });

  it("queue: sends a job, requeues dead-lettered jobs (one, then all), purges done jobs by the queue's name", {
    timeout: 60_000,
  }, async () => {
    await open("queue");
    await page.getByText("No queues yet").waitFor();
    await page.getByRole("button", { name: "Send a job" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Queue").fill("emails");
    await dialog.getByLabel("Body (JSON)").fill('{"to": "ada@data.test"}');
    await dialog.getByLabel("Priority").fill("5");
    await dialog.getByRole("button", { name: "Send", exact: true }).click();
    await page.getByText(/^Sent job /).waitFor();
    // Another job through REST; both received and dead-lettered through REST.
    expect((await rest("POST", on("queue", "/queues/emails/messages"), { body: { to: "bob@data.test" } })).status).toBe(
      201,
    );
    const received = (await rest("POST", on("queue", "/queues/emails/receive"), { max: 2 })).body.data;
    const job = received.find((j: { priority: number }) => j.priority === 5);
    expect(job).toMatchObject({ body: { to: "ada@data.test" } });
    for (const j of received) {
      const dead = await rest("POST", on("queue", `/queues/emails/messages/${j.id}/ack`), {
        lease_token: j.lease_token,
        action: "dead",
        error: "mailbox full",
      });
      expect(dead.status).toBe(200);
    }
    const status = async (id: string) => (await rest("GET", on("queue", `/queues/emails/messages/${id}`))).body.status;
    await page.reload();
    await page.getByRole("button", { name: "dead (2)" }).click();
    await page.getByText("mailbox full").first().waitFor();
    await shots("queue");
    await page.getByRole("button", { name: `Requeue ${job.id}` }).click();
    await page.getByText(`Requeued ${job.id}`).waitFor();
    expect(await status(job.id)).toBe("ready");
    await page.getByRole("button", { name: "Requeue all 1" }).click();
    await page.getByText("Requeued 1 dead job").waitFor();
    expect(received.length).toBe(2);
    for (const j of received) expect(await status(j.id)).toBe("ready");
    // Done, then purged with the queue's name typed.
    for (const j of (await rest("POST", on("queue", "/queues/emails/receive"), { max: 2 })).body.data) {
      await rest("POST", on("queue", `/queues/emails/messages/${j.id}/ack`), { lease_token: j.lease_token });
    }
    await page.reload();
    await page.getByRole("button", { name: "done (2)" }).click();
    await page.getByRole("button", { name: "Purge done" }).click();
    expect(await dialog.getByRole("button", { name: "Purge" }).isDisabled()).toBe(true);
    await dialog.getByLabel("Type emails to confirm").fill("emails");
    await dialog.getByRole("button", { name: "Purge" }).click();
    await page.getByText("Purged 2 done jobs").waitFor();
    expect((await rest("GET", on("queue", "/queues/emails/messages?status=done"))).body.data).toEqual([]);
  });

  it("storage: uploads two files to a prefix with progress, shows details, deletes one", {
    timeout: 60_000,
  }, async () => {
    await open("storage");
    await page.getByText("No objects yet").waitFor();
    await page.getByLabel("To prefix").fill("reports/2026/");
    await page.getByLabel("Files").setInputFiles([
      { name: "a.txt", mimeType: "text/plain", buffer: Buffer.from("alpha") },
      { name: "b.csv", mimeType: "text/csv", buffer: Buffer.alloc(300 * 1024, "b") },
    ]);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText("Uploaded 2 files").waitFor();
    const listed = await rest("GET", on("storage", "/objects?prefix=reports/2026/"));
    expect(listed.body.data.map((o: { key: string; size: number }) => [o.key, o.size])).toEqual([
      ["reports/2026/a.txt", 5],
      ["reports/2026/b.csv", 300 * 1024],
    ]);
    await page.getByRole("button", { name: "Open folder reports/" }).click();
    await page.getByRole("button", { name: "Open folder reports/2026/" }).click();
    await page.getByRole("button", { name: "Details of reports/2026/b.csv" }).click();
    await page.getByRole("dialog").getByText("text/csv").waitFor();
    await page.keyboard.press("Escape");
    await shots("storage");
    await page.getByRole("button", { name: "Delete reports/2026/a.txt" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByText("Deleted reports/2026/a.txt").waitFor();
    const after = await rest("GET", on("storage", "/objects?prefix=reports/"));
    expect(after.body.data.map((o: { key: string }) => o.key)).toEqual(["reports/2026/b.csv"]);
    // A refused upload says the spec's code: the store paused (423 `paused`), nothing written.
    expect((await rest("POST", on("storage", "/pause"))).status).toBe(200);
    await page.getByLabel("Files").setInputFiles([{ name: "c.txt", mimeType: "text/plain", buffer: Buffer.from("c") }]);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.getByText(/^reports\/2026\/c\.txt: paused: /).waitFor();
    expect((await rest("POST", on("storage", "/resume"))).status).toBe(200);
    expect((await rest("GET", on("storage", "/objects/reports/2026/c.txt?stat=1"))).status).toBe(404);
  });

  it("a member edits kv; a billing user sees no data pages", { timeout: 40_000 }, async () => {
    const mp = memberPage;
    await open("kv", mp);
    await mp.getByRole("button", { name: "Add key" }).first().click();
    await mp.getByRole("dialog").getByLabel("Key").fill("by-member");
    await mp.getByRole("dialog").getByLabel("Value (JSON)").fill("42");
    await mp.getByRole("dialog").getByRole("button", { name: "Add key" }).click();
    await mp.getByText("Added by-member").waitFor();
    expect((await rest("GET", on("kv", "/keys/by-member"))).body.value).toBe(42);
    const bp = billingPage;
    expect(await bp.getByRole("link", { name: "Data", exact: true }).count()).toBe(0);
    const res = await open("kv", bp);
    expect(res?.status()).toBe(404);
    expect(await bp.getByText("by-member").count()).toBe(0);
  });
});

/** A file's bytes as text through REST (raw body, not JSON). */
async function raw(path: string): Promise<string> {
  const res = await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return res.text();
}
