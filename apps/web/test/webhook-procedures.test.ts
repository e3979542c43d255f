// The `webhooks.*` procedures beyond their permissions (procedures.test.ts) and isolation
// (procedure-isolation.test.ts), against a real cell and Postgres: a Starter workspace is
// refused `plan_limit` as the API refuses it, while a Pro workspace's owner makes a primitive's
// endpoint through the cell (the secret in that answer only), lists it with the primitive's
// name, gets the API's own refusal of a bad URL, and deletes it.
import { randomBytes } from "node:crypto";
import * as PrimDb from "@prim/db";
import { startCloud, type TestCloud } from "@prim/testkit/cloud";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cellCalls } from "../src/server/cell";
import { userPrincipal } from "../src/server/trpc/init";
import { callerWith, testContext } from "./trpc-caller";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let pool: pg.Pool;
let owner: ReturnType<typeof callerWith>;
let workspace: string;
let small: string;
let kv: string;

beforeAll(async () => {
  cloud = await startCloud("webhookprocs", { PRIM_INTERNAL_SECRET: SECRET }, { webhooks: { intervalMs: 0 } });
  pool = cloud.api.hub.pool as pg.Pool;
  const invoker = new RemoteInvoker({ url: cloud.internalUrl, secret: SECRET });
  const user = {
    id: (await PrimDb.createUser(pool, { email: "o@hooks.test", password: "password123" })).id,
    email: "o@hooks.test",
  };
  workspace = (await PrimDb.createWorkspace(pool, { name: "Pro", plan: "pro", ownerId: user.id, key: false })).workspace
    .id;
  small = (await PrimDb.createWorkspace(pool, { name: "Small", ownerId: user.id, key: false })).workspace.id;
  const principal = userPrincipal(user, workspace, "owner");
  await invoker.invoke(principal, "group.create", null, { name: "app" });
  kv = (
    await invoker.invoke<{ id: string }>(principal, "primitive.create", null, {
      name: "cache",
      type: "kv",
      group: "app",
    })
  ).id;
  const context = testContext({
    pool,
    invoker,
    apiUrl: cloud.url,
    cell: cellCalls({ url: cloud.internalUrl, secret: SECRET }),
  });
  owner = callerWith(context, user);
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
});

describe("webhooks.*", () => {
  it("refuses a Starter workspace plan_limit; makes, lists and deletes a Pro one's, the secret once", async () => {
    for (const call of [
      () => owner.webhooks.list({ workspace: small }),
      () => owner.webhooks.create({ workspace: small, group: "app", url: "https://hooks.invalid/starter" }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("Pro plan") });
    }
    const made = await owner.webhooks.create({
      workspace,
      primitive: kv,
      url: "https://hooks.invalid/made",
      filter: { ops: ["set"], prefix: "user:" },
      description: "made here",
    });
    expect(made.secret).toMatch(/^whsec_/);
    const listed = (await owner.webhooks.list({ workspace })).find((e) => e.id === made.id);
    expect(listed).toMatchObject({
      primitive: kv,
      primitive_info: { name: "cache", type: "kv", group: "app" },
      filter: { ops: ["set"], prefix: "user:" },
      description: "made here",
    });
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    // A URL the API refuses is refused the same way, its message kept.
    await expect(
      owner.webhooks.create({ workspace, group: "app", url: "ftp://hooks.invalid/x" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("https") });
    await owner.webhooks.delete({ workspace, id: made.id });
    expect(await owner.webhooks.list({ workspace })).toEqual([]);
  });
});
