// Deleting a workspace (`workspace.delete`, owners only) against the real stack: apps/api (a
// cell with its authorization server), apps/mcp, Postgres, Redis, S3 in s3rver and the Stripe
// stand-in. Another workspace's owner, an admin and a wrong name are refused and change nothing
// (the key and the OAuth token still work); the owner's deletion then ends the key (401 on REST),
// the OAuth token (401 on MCP), the invitation, the members and the Pro subscription (canceled
// at Stripe), deletes the groups with their data in the cell (catalog rows and files), drops the
// workspace and leaves `workspace.delete` in the audit for the operator — while the same owner's
// other workspace keeps its key, its data and its connection.
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import * as PrimBilling from "@prim/billing";
import { type StripeStandIn, startStripeStandIn } from "@prim/billing/standin";
import * as PrimDb from "@prim/db";
import { createUser, createWorkspace, inviteMember, Revocations } from "@prim/db";
import { Browser, call, consent, MemoryProvider, type OAuthStack, startOAuthStack } from "@prim/testkit/cloud";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerWith, type TestContext, testContext } from "./trpc-caller";

const WEBHOOK_SECRET = "whsec_delete";
let standin: StripeStandIn;
let stack: OAuthStack;
let pool: pg.Pool;
let revocations: Revocations;
let context: TestContext;
const users: Record<"alice" | "adam" | "mallory", { id: string; email: string }> = {} as never;

interface Made {
  id: string;
  key: string;
  kv: string;
  fs: string;
  token: string;
}
let doomed: Made;
let kept: Made;
let mallorys: string;

const caller = (who: keyof typeof users) => callerWith(context, users[who]);

/** An MCP `initialize` with a Bearer credential: its status says whether it still works. */
const initializeWith = (token: string) =>
  fetch(stack.mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });

/** A workspace of alice's with a key, a group `app` holding a kv value and a file, and an agent connected through OAuth. */
async function workspaceWithData(name: string): Promise<Made> {
  const made = await createWorkspace(pool, { name, ownerId: users.alice.id });
  const key = made.key;
  const url = stack.cloud.url;
  expect((await call(url, key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
  const kv = (await call(url, key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body.id;
  expect((await call(url, key, "PUT", `/v1/primitives/${kv}/keys/greeting`, { value: `hello ${name}` })).status).toBe(
    200,
  );
  const fs = (await call(url, key, "POST", "/v1/primitives", { name: "docs", type: "fs", group: "app" })).body.id;
  const put = await fetch(`${url}/v1/primitives/${fs}/files/notes.txt`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/octet-stream" },
    body: `notes of ${name}`,
  });
  expect(put.status).toBeLessThan(300);
  // An agent connected through OAuth, consented by alice in the browser.
  const provider = new MemoryProvider();
  expect(await auth(provider, { serverUrl: stack.mcpUrl })).toBe("REDIRECT");
  const browser = new Browser({ [new URL(stack.dashboard).host]: { user: users.alice.id } });
  const back = await consent(stack, browser, provider.authorizationUrl as URL, {
    workspace: made.workspace.id,
    group: "app",
    tools: ["kv_get"],
    action: "allow",
  });
  if (!(back instanceof URL)) throw new Error(`consent stopped: ${back.status} ${await back.text()}`);
  const code = back.searchParams.get("code") as string;
  expect(await auth(provider, { serverUrl: stack.mcpUrl, authorizationCode: code })).toBe("AUTHORIZED");
  return { id: made.workspace.id, key, kv, fs, token: provider.saved?.access_token as string };
}

/** The files the cell holds for a workspace (its data directory, under the test cells' temp root). */
function filesOf(workspace: string): string[] {
  const found: string[] = [];
  for (const root of readdirSync(tmpdir()).filter((d) => d.startsWith("prim-cells-"))) {
    for (const cell of safeList(join(tmpdir(), root))) {
      const dir = join(tmpdir(), root, cell, workspace);
      for (const entry of safeList(dir, true)) found.push(entry);
    }
  }
  return found;
}

function safeList(dir: string, recursive = false): string[] {
  try {
    return readdirSync(dir, { recursive, withFileTypes: true })
      .filter((e) => !recursive || e.isFile())
      .map((e) => (recursive ? join(e.parentPath, e.name) : e.name));
  } catch {
    return [];
  }
}

const count = async (table: string, workspace: string) =>
  Number(
    (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = $1`, [workspace])).rows[0]
      ?.n,
  );

beforeAll(async () => {
  standin = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  stack = await startOAuthStack("webdelete", {
    env: { STRIPE_SECRET_KEY: "sk_test_delete", STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: standin.url },
  });
  standin.setWebhookUrl(`${stack.cloud.url}/v1/billing/webhook`);
  const stripe = PrimBilling.createStripe({ secretKey: "sk_test_delete", apiUrl: standin.url });
  await PrimBilling.syncStripe(stripe);
  pool = stack.cloud.api.hub.pool as pg.Pool;
  revocations = new Revocations("redis://127.0.0.1:6379");
  context = testContext({
    pool,
    publish: (message) => revocations.publish(message),
    invoker: new RemoteInvoker({ url: stack.internalUrl, secret: stack.secret }),
    dashboardUrl: stack.dashboard,
    apiUrl: stack.cloud.url,
    mcpUrl: `${stack.cloud.url}/mcp`,
    billing: { stripe, lib: PrimBilling },
  });
  for (const who of ["alice", "adam", "mallory"] as const) {
    const email = `${who}-${randomBytes(3).toString("hex")}@delete.test`;
    users[who] = { id: (await createUser(pool, { email, password: "password123" })).id, email };
  }
  doomed = await workspaceWithData("Doomed");
  kept = await workspaceWithData("Kept");
  await pool.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, 'admin')", [
    doomed.id,
    users.adam.id,
  ]);
  mallorys = (await createWorkspace(pool, { name: "Doomed", ownerId: users.mallory.id, key: false })).workspace.id;
  await inviteMember(pool, { workspace: doomed.id, email: "later@delete.test", role: "member", invitedBy: "admin" });
  // Doomed is on Pro through Stripe (the stand-in's checkout, its webhooks to the cell).
  const { url } = await caller("alice").billing.checkout({ workspace: doomed.id });
  await standin.completeCheckout(url.split("/").pop() as string);
  expect((await PrimDb.readWorkspace(pool, doomed.id))?.plan).toBe("pro");
  // Pro takes snapshots: one of the kv, to be deleted with it.
  const snap = await call(stack.cloud.url, doomed.key, "POST", `/v1/primitives/${doomed.kv}/snapshots`, { name: "s" });
  expect(snap.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await revocations?.close();
  await stack?.stop();
  await standin?.close();
});

describe("workspace.delete", () => {
  it("refuses another workspace's owner, an admin and a wrong name, and changes nothing", async () => {
    // Mallory owns a workspace of the same name: owning one is no right over another.
    await expect(caller("mallory").workspace.delete({ workspace: doomed.id, name: "Doomed" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(caller("adam").workspace.delete({ workspace: doomed.id, name: "Doomed" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(caller("alice").workspace.delete({ workspace: doomed.id, name: "doomed" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("'Doomed'"),
    });
    expect((await call(stack.cloud.url, doomed.key, "GET", `/v1/primitives/${doomed.kv}/keys/greeting`)).status).toBe(
      200,
    );
    expect((await initializeWith(doomed.token)).status).toBe(200);
    expect(await count("members", doomed.id)).toBe(2);
    // Mallory's own workspace is hers to delete (the rightful caller succeeds).
    await expect(caller("mallory").workspace.delete({ workspace: mallorys, name: "Doomed" })).resolves.toEqual({
      id: mallorys,
      name: "Doomed",
    });
  });

  it("an owner's deletion ends every credential, the subscription and the data; the other workspace is untouched", async () => {
    const subscription = (
      await pool.query<{ id: string }>(
        "SELECT stripe_subscription_id AS id FROM subscriptions WHERE workspace_id = $1",
        [doomed.id],
      )
    ).rows[0]?.id as string;
    expect(filesOf(doomed.id).length).toBeGreaterThan(0);
    expect(await count("snapshots", doomed.id)).toBe(1);

    await expect(caller("alice").workspace.delete({ workspace: doomed.id, name: "Doomed" })).resolves.toEqual({
      id: doomed.id,
      name: "Doomed",
    });

    // Credentials: the key on REST, the OAuth token on MCP.
    const rest = await call(stack.cloud.url, doomed.key, "GET", `/v1/primitives/${doomed.kv}/keys/greeting`);
    expect(rest.status).toBe(401);
    expect(rest.body.error.code).toBe("invalid_token");
    expect((await initializeWith(doomed.token)).status).toBe(401);
    // The data in the cell: catalog rows and files.
    for (const table of [
      "groups",
      "primitives",
      "snapshots",
      "api_keys",
      "members",
      "invitations",
      "oauth_connections",
    ]) {
      expect(await count(table, doomed.id), table).toBe(0);
    }
    expect(filesOf(doomed.id)).toEqual([]);
    expect(await PrimDb.readWorkspace(pool, doomed.id)).toBeNull();
    // Billing: the subscription ended at once at Stripe.
    const sub = await context.billing?.stripe.subscriptions.retrieve(subscription);
    expect(sub?.status).toBe("canceled");
    // Nobody keeps it in their list; the admin's procedures find nothing.
    expect((await caller("alice").workspace.list()).map((w) => w.id)).toEqual([kept.id]);
    expect(await caller("adam").workspace.list()).toEqual([]);
    await expect(caller("adam").keys.list({ workspace: doomed.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // The operator's trace: the retained `workspace.delete` entry.
    const [trace] = (await PrimDb.deletedWorkspaces(pool)).filter((d) => d.id === doomed.id);
    expect(trace).toMatchObject({
      name: "Doomed",
      actor: `user:${users.alice.id}`,
      detail: {
        plan: "pro",
        groups: ["app"],
        keys_revoked: 1,
        connections_ended: 1,
        invitations_withdrawn: 1,
        subscription_canceled: subscription,
        members: expect.arrayContaining([
          { user: `user:${users.alice.id}`, role: "owner" },
          { user: `user:${users.adam.id}`, role: "admin" },
        ]),
      },
    });
    // Deleting again: nothing is there.
    await expect(caller("alice").workspace.delete({ workspace: doomed.id, name: "Doomed" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });

    // The same owner's other workspace: key, data, files and connection as before.
    const value = await call(stack.cloud.url, kept.key, "GET", `/v1/primitives/${kept.kv}/keys/greeting`);
    expect(value).toMatchObject({ status: 200, body: { value: "hello Kept" } });
    expect(filesOf(kept.id).length).toBeGreaterThan(0);
    expect((await initializeWith(kept.token)).status).toBe(200);
  });

  it("a deletion interrupted by the cell is finished by deleting again", async () => {
    const made = await createWorkspace(pool, { name: "Halfway", ownerId: users.alice.id });
    const url = stack.cloud.url;
    expect((await call(url, made.key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
    const id = made.workspace.id;
    // The cell does not answer (an address where nothing listens).
    const down = callerWith(
      { ...context, invoker: new RemoteInvoker({ url: "http://127.0.0.1:9", secret: stack.secret }) },
      users.alice,
    );
    await expect(down.workspace.delete({ workspace: id, name: "Halfway" })).rejects.toMatchObject({
      code: "INTERNAL_SERVER_ERROR",
      message: expect.stringContaining("delete the workspace again"),
    });
    // Half done: no credential works, the data and the workspace are still there.
    expect((await call(url, made.key, "GET", "/v1/groups")).status).toBe(401);
    expect(await count("groups", id)).toBe(1);
    expect((await caller("alice").workspace.list()).map((w) => w.name)).toContain("Halfway");
    await expect(caller("alice").workspace.delete({ workspace: id, name: "Halfway" })).resolves.toEqual({
      id,
      name: "Halfway",
    });
    expect(await count("groups", id)).toBe(0);
    expect(await PrimDb.readWorkspace(pool, id)).toBeNull();
  });
});
