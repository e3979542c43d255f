// A webhook endpoint that fails for 24 hours (issue 42, item 3), against a moved clock: its
// delivery is retried with backoff, never more often than the schedule, then failed; the
// endpoint is disabled (audited `webhook.disable`) and the workspace's owners are mailed. Enabled
// again, its pending deliveries go out. The dispatcher's rounds are run by hand.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createUser, createWorkspace, GIVE_UP_MS } from "@prim/db";
import { ManualClock } from "@prim/engine";
import { type MailCapture, startMailCapture } from "@prim/mail";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
let cloud: TestCloud;
let mail: MailCapture;
let server: Server;
let hookUrl: string;
let answer = 500;
let attempts = 0;
/** Runs while a delivery is in flight, before the receiver answers. */
let during: (() => Promise<void>) | null = null;

beforeAll(async () => {
  mail = await startMailCapture();
  server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      attempts++;
      await during?.();
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  cloud = await startCloud(
    "webhooks_disable",
    { PRIM_LIMITS: "on", PRIM_WEBHOOKS_LOOPBACK: "allow", SMTP_URL: mail.smtpUrl },
    { clock, webhooks: { intervalMs: 0 } },
  );
}, 90_000);
afterAll(async () => {
  await cloud?.stop();
  server?.close();
  await mail?.close();
});

describe("an endpoint failing for 24 hours", () => {
  it("is retried on the schedule, then disabled with a mail to the owners; enabled again, it delivers", async () => {
    const pool = cloud.api.hub.pool;
    const { workspace, key } = await createWorkspace(pool, { name: "hooks", plan: "pro" });
    await createUser(pool, {
      email: "owner@example.com",
      password: "correct horse battery",
      workspace: workspace.id,
      role: "owner",
    });
    await call(cloud.url, key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(cloud.url, key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body.id;
    const made = await call(cloud.url, key, "POST", "/v1/webhooks", { url: hookUrl, primitive: kv });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await call(cloud.url, key, "PUT", `/v1/primitives/${kv}/keys/a`, { value: 1 });
    const tick = () => cloud.api.webhooks.tick();
    await tick();
    expect(attempts).toBe(1);
    // Not due yet: a round a second later sends nothing.
    clock.advance(1_000);
    await tick();
    expect(attempts).toBe(1);
    // An hour at a time: attempts follow the backoff, far fewer than one per round.
    let rounds = 0;
    const start = clock.now();
    let info = (await call(cloud.url, key, "GET", `/v1/webhooks/${made.body.id}`)).body;
    while (info.disabled_at === null && clock.now() - start < 2 * GIVE_UP_MS) {
      clock.advance(3_600_000);
      await tick();
      rounds++;
      info = (await call(cloud.url, key, "GET", `/v1/webhooks/${made.body.id}`)).body;
    }
    expect(info.disabled_at).not.toBeNull();
    expect(info.disabled_reason).toContain("24 hours");
    expect(clock.now() - start).toBeGreaterThanOrEqual(GIVE_UP_MS - 3_600_000);
    expect(attempts).toBeLessThan(rounds);
    const log = (await call(cloud.url, key, "GET", `/v1/webhooks/${made.body.id}/deliveries`)).body.data;
    expect(log[0]).toMatchObject({ status: "failed", last_status: 500 });
    const told = await mail.waitFor((m) => m.to.includes("owner@example.com"), 10_000);
    expect(told.subject).toContain(made.body.id);
    const audit = await call(cloud.url, key, "GET", "/v1/audit?action=webhook.disable");
    expect(audit.body.data.map((e: { target: string }) => e.target)).toEqual([made.body.id]);
    // Disabled: new changes wait, nothing is sent.
    const before = attempts;
    await call(cloud.url, key, "PUT", `/v1/primitives/${kv}/keys/b`, { value: 1 });
    clock.advance(60_000);
    await tick();
    expect(attempts).toBe(before);
    // The receiver is fixed and the endpoint enabled: what waited goes out.
    answer = 200;
    const enabled = await call(cloud.url, key, "POST", `/v1/webhooks/${made.body.id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ disabled_at: null, failing_since: null });
    await tick();
    expect(attempts).toBe(before + 1);
    const after = (await call(cloud.url, key, "GET", `/v1/webhooks/${made.body.id}/deliveries`)).body.data;
    expect(after[0]).toMatchObject({ status: "delivered", last_status: 200 });
  }, 120_000);
});

describe("a process that died holding an endpoint", () => {
  it("holds it up only until its lease lapses (15 s); then another process delivers", async () => {
    const pool = cloud.api.hub.pool;
    const { key } = await createWorkspace(pool, { name: "lapsed", plan: "pro" });
    await call(cloud.url, key, "POST", "/v1/groups", { name: "app" });
    const kv = (await call(cloud.url, key, "POST", "/v1/primitives", { name: "c", type: "kv", group: "app" })).body.id;
    const made = await call(cloud.url, key, "POST", "/v1/webhooks", { url: hookUrl, primitive: kv });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    answer = 200;
    const tick = () => cloud.api.webhooks.tick();
    // While a delivery is in flight, the endpoint is leased for 15 s of the dispatcher's clock.
    let lease: { lease_holder: string; lease_until: Date } | undefined;
    during = async () => {
      lease = (
        await pool.query("SELECT lease_holder, lease_until FROM webhook_endpoints WHERE id = $1", [made.body.id])
      ).rows[0];
    };
    await call(cloud.url, key, "PUT", `/v1/primitives/${kv}/keys/first`, { value: 1 });
    await tick();
    during = null;
    expect(lease?.lease_until.getTime()).toBe(clock.now() + 15_000);
    // That process is SIGKILLed mid-delivery: its lease stays behind.
    await pool.query("UPDATE webhook_endpoints SET lease_holder = 'dispatcher:dead', lease_until = $2 WHERE id = $1", [
      made.body.id,
      lease?.lease_until,
    ]);
    await call(cloud.url, key, "PUT", `/v1/primitives/${kv}/keys/a`, { value: 1 });
    const before = attempts;
    await tick();
    clock.advance(14_000);
    await tick();
    expect(attempts).toBe(before);
    clock.advance(2_000);
    await tick();
    expect(attempts).toBe(before + 1);
    const log = (await call(cloud.url, key, "GET", `/v1/webhooks/${made.body.id}/deliveries`)).body.data;
    expect(log.map((d: { status: string }) => d.status)).toEqual(["delivered", "delivered"]);
  }, 60_000);
});
