// `POST /internal/webhooks` (webhooks/internal.ts): the dashboard's create, on the cell's
// internal listener, through the same path as `POST /v1/webhooks`. Only the shared secret opens
// it; the principal named must be account-level and not read-only, on Pro (Starter: 403
// `plan_limit`); the rightful caller gets the endpoint with its secret once, starting at the
// feed's head, audited as the user; another workspace's group is not found.
import { randomBytes } from "node:crypto";
import { createUser, createWorkspace } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let pool: pg.Pool;
let pro: { id: string; key: string };
let starter: string;
let userId: string;

const owner = (workspace: string, extra: Record<string, unknown> = {}) => ({
  kind: "account",
  workspace,
  actor: `user:${userId}`,
  groupId: null,
  tools: null,
  ...extra,
});

async function create(principal: unknown, body: unknown, secret = SECRET) {
  const res = await fetch(`${cloud.internalUrl}/internal/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ principal, body }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  cloud = await startCloud("webhooksinternal", { PRIM_INTERNAL_SECRET: SECRET }, { webhooks: { intervalMs: 0 } });
  pool = cloud.api.hub.pool as pg.Pool;
  userId = (await createUser(pool, { email: "owner@internal.test", password: "password123" })).id;
  const made = await createWorkspace(pool, { name: "Pro", plan: "pro", ownerId: userId });
  pro = { id: made.workspace.id, key: made.key };
  starter = (await createWorkspace(pool, { name: "Small", ownerId: userId, key: false })).workspace.id;
  await call(cloud.url, pro.key, "POST", "/v1/groups", { name: "app" });
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
});

describe("POST /internal/webhooks", () => {
  const body = { url: "https://hooks.invalid/dashboard", group: "app", description: "from the dashboard" };

  it("refuses without the shared secret, a member's principal, a read-only one and Starter", async () => {
    expect((await create(owner(pro.id), body, "x".repeat(48))).status).toBe(401);
    const member = { ...owner(pro.id), kind: "scoped" };
    expect(await create(member, body)).toMatchObject({ status: 403, body: { error: { code: "forbidden" } } });
    expect(await create(owner(pro.id, { readOnly: true }), body)).toMatchObject({
      status: 403,
      body: { error: { code: "forbidden" } },
    });
    expect(await create(owner(starter), body)).toMatchObject({ status: 403, body: { error: { code: "plan_limit" } } });
    expect(await create(owner(pro.id), { url: "https://hooks.invalid/x" })).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_request" } },
    });
    expect((await call(cloud.url, pro.key, "GET", "/v1/webhooks")).body.data).toEqual([]);
  });

  it("creates for the rightful owner: the secret once, audited as the user; another workspace's group not found", async () => {
    const made = await create(owner(pro.id), body);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ url: body.url, group: "app", description: "from the dashboard" });
    expect(made.body.secret).toMatch(/^whsec_/);
    const read = await call(cloud.url, pro.key, "GET", `/v1/webhooks/${made.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    const audit = await call(cloud.url, pro.key, "GET", "/v1/audit?type=workspace&action=webhook.create");
    expect(audit.body.data[0]).toMatchObject({ actor: `user:${userId}`, target: made.body.id });

    const other = await createWorkspace(pool, { name: "Other", plan: "pro", ownerId: userId, key: false });
    expect(await create(owner(other.workspace.id), body)).toMatchObject({
      status: 404,
      body: { error: { code: "not_found" } },
    });
  });
});
