// Issue 38, item 2: the control actions of the operator (`prim admin`, actor `admin`) and of
// Stripe (webhooks, actor `stripe`) in the workspace's audit log, read back through the real
// REST API (`GET /v1/audit?type=workspace` with the workspace's key): one test per action, each
// entry a control entry (`primitive` `workspace`, `primitive_id` null) with its target and
// detail, and no key, password or Stripe secret anywhere in it. The dashboard's actions are
// apps/web/test/control-audit.test.ts; `workspace.move`'s recording function is checked here
// (the move itself is @prim/cells').
import { randomBytes } from "node:crypto";
import { checkoutSession, createStripe, ensureCustomer, type Stripe, syncStripe } from "@prim/billing";
import { type StripeStandIn, startStripeStandIn } from "@prim/billing/standin";
import { recordWorkspaceMove } from "@prim/db";
import { runPrimCommand } from "@prim/testkit";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { keyStart } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString("hex")}`;
const PASSWORD = "operator-made-password";
let standin: StripeStandIn;
let cloud: TestCloud;
let stripe: Stripe;
let workspace: string;
let workspaceKey: string;
let workspaceKeyId: string;
/** Every secret handed out: none may appear in an audit entry. */
const secrets: string[] = [WEBHOOK_SECRET, PASSWORD, "sk_test_prim"];

beforeAll(async () => {
  standin = await startStripeStandIn({ webhookSecret: WEBHOOK_SECRET });
  cloud = await startCloud("ctlaudit", {
    STRIPE_SECRET_KEY: "sk_test_prim",
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_URL: standin.url,
  });
  standin.setWebhookUrl(`${cloud.url}/v1/billing/webhook`);
  stripe = createStripe({ secretKey: "sk_test_prim", apiUrl: standin.url });
  await syncStripe(stripe);
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
  await standin?.close();
});

/** `prim admin <args> --json` against the cloud's database: its JSON answer. */
async function admin(...args: string[]): Promise<any> {
  const res = await runPrimCommand(["admin", ...args, "--json"], {
    ...process.env,
    DATABASE_URL: cloud.databaseUrl,
    REDIS_URL: "redis://127.0.0.1:6379",
  });
  expect(res).toMatchObject({ code: 0 });
  return JSON.parse(res.stdout);
}

type Entry = { group: string; primitive: string; primitive_id: string | null; actor: string; target: string | null };

/** The newest control entry with `action` (and `target`), through REST with the workspace's key. */
async function entry(action: string, target: string): Promise<Entry & Record<string, unknown>> {
  const res = await call(cloud.url, workspaceKey, "GET", `/v1/audit?type=workspace&action=${action}`);
  expect(res.status).toBe(200);
  const found = res.body.data.find((e: Entry) => e.target === target);
  expect(found).toMatchObject({ group: "", primitive: "workspace", primitive_id: null, instance: null, action });
  const text = JSON.stringify(found);
  for (const secret of secrets) expect(text).not.toContain(secret);
  return found;
}

// Each test runs the real command (a process start each): room under a parallel run.
describe("the operator's and Stripe's control actions in GET /v1/audit?type=workspace", { timeout: 60_000 }, () => {
  it("workspace.create (prim admin workspace create), with its workspace key's key.create", async () => {
    const made = await admin("workspace", "create", "--name", "Ops", "--plan", "pro");
    workspace = made.workspace.id;
    workspaceKey = made.key;
    workspaceKeyId = made.key_id;
    secrets.push(workspaceKey);
    expect(await entry("workspace.create", workspace)).toMatchObject({
      actor: "admin",
      detail: { name: "Ops", plan: "pro", owner: null },
    });
    expect(await entry("key.create", workspaceKeyId)).toMatchObject({
      actor: "admin",
      detail: { start: keyStart(workspaceKey), name: "workspace key", group: null, tools: null },
    });
  });

  it("key.create (prim admin key create): the key's id and start, never the key", async () => {
    const key = await admin("key", "create", "--workspace", workspace, "--tools", "kv_get", "--name", "ci");
    secrets.push(key.key);
    expect(await entry("key.create", key.id)).toMatchObject({
      actor: "admin",
      detail: { start: keyStart(key.key), name: "ci", group: null, tools: ["kv_get"] },
    });
  });

  it("key.revoke (prim admin key revoke)", async () => {
    const key = await admin("key", "create", "--workspace", workspace);
    secrets.push(key.key);
    await admin("key", "revoke", "--id", key.id);
    expect(await entry("key.revoke", key.id)).toMatchObject({ actor: "admin", detail: { start: keyStart(key.key) } });
  });

  it("member.add (prim admin user create --workspace)", async () => {
    const user = await admin(
      "user",
      "create",
      "--email",
      "ops@audit.test",
      "--password",
      PASSWORD,
      "--workspace",
      workspace,
      "--role",
      "admin",
    );
    expect(await entry("member.add", `user:${user.id}`)).toMatchObject({ actor: "admin", detail: { role: "admin" } });
  });

  it("secret_export.enable (prim admin workspace secret-export --on)", async () => {
    await admin("workspace", "secret-export", "--workspace", workspace, "--on");
    expect(await entry("secret_export.enable", workspace)).toMatchObject({ actor: "admin", detail: { was: false } });
  });

  it("plan.change (prim admin plan set)", async () => {
    await admin("plan", "set", "--workspace", workspace, "--plan", "enterprise", "--rps", "50", "--burst", "100");
    expect(await entry("plan.change", workspace)).toMatchObject({
      actor: "admin",
      detail: { from: "pro", to: "enterprise", rps: 50, burst: 100 },
    });
    await admin("plan", "set", "--workspace", workspace, "--plan", "pro");
  });

  it("plan.change by Stripe (checkout's webhooks), actor stripe; cancellation back to Starter too", async () => {
    const made = await admin("workspace", "create", "--name", "Payer");
    const ws = made.workspace.id as string;
    secrets.push(made.key);
    const customer = await ensureCustomer(cloud.api.hub.pool, stripe, { id: ws, name: "Payer" });
    const url = await checkoutSession(stripe, {
      customer,
      workspace: ws,
      billingPageUrl: `https://dash.prim.test/w/${ws}/billing`,
      attempt: "1",
    });
    const { subscription } = await standin.completeCheckout(url.split("/").pop() as string);
    expect(standin.deliveries().filter((d) => d.status !== 200)).toEqual([]);
    const read = async (action: string) => {
      const res = await call(cloud.url, made.key, "GET", `/v1/audit?type=workspace&action=${action}`);
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body.data);
      for (const secret of secrets) expect(text).not.toContain(secret);
      return res.body.data;
    };
    expect(await read("plan.change")).toEqual([
      expect.objectContaining({
        actor: "stripe",
        primitive: "workspace",
        primitive_id: null,
        target: ws,
        detail: { from: "starter", to: "pro", reason: "subscription active" },
      }),
    ]);
    await stripe.subscriptions.cancel(subscription);
    // Back on Starter the audit log is Pro's: the operator reads it after making it Pro again.
    await admin("plan", "set", "--workspace", ws, "--plan", "pro");
    const changes = await read("plan.change");
    expect(changes.map((e: { actor: string; detail: { to: string } }) => [e.actor, e.detail.to])).toEqual([
      ["admin", "pro"],
      ["stripe", "starter"],
      ["stripe", "pro"],
    ]);
  });

  it("workspace.move (recordWorkspaceMove, which the move calls when the placement flips)", async () => {
    await recordWorkspaceMove(cloud.api.hub.pool, { workspace, from: "cell-a", to: "cell-b" });
    expect(await entry("workspace.move", workspace)).toMatchObject({
      actor: "admin",
      detail: { from: "cell-a", to: "cell-b" },
    });
  });
});
