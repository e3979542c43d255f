// Webhooks (issue 42, item 3) end to end: an api cell as a child process (limits on, S3,
// durable) delivers a group's committed changes to a receiver on this machine, signed in the
// Standard Webhooks format (checked here with node:crypto, independently of @prim/wire), at least
// once through a SIGKILL and a restart of the api, never carrying a value. Filters narrow them; a
// failing receiver is retried and a delivery can be sent again by hand; Starter, scoped keys and
// another workspace are refused while the rightful caller succeeds.
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createKey } from "@prim/db";
import { PrimClient, verifyWebhook } from "@prim/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiProcess } from "./cell-processes.js";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on loopback: records every request; answers `status()` (200 unless set). */
async function receiver(): Promise<{ url: string; got: Received[]; status: { next: number }; server: Server }> {
  const got: Received[] = [];
  const status = { next: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status.next).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, status, server };
}

/** Standard Webhooks, checked with node:crypto alone. */
function genuine(secret: string, r: Received): boolean {
  const id = r.headers["webhook-id"] as string;
  const ts = r.headers["webhook-timestamp"] as string;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const want = `v1,${createHmac("sha256", key).update(`${id}.${ts}.${r.body}`).digest("base64")}`;
  return (r.headers["webhook-signature"] as string).split(" ").includes(want);
}

async function until<T>(what: string, fn: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const servers: Server[] = [];
let cloud: ProbeCloud;
let ws: ProbeWorkspace;
let api: string;

beforeAll(async () => {
  cloud = await startProbeCloud("webhooks", ["cell-a"], { PRIM_WEBHOOKS_LOOPBACK: "allow" });
  ws = await cloud.workspace("hooks", "pro", { on: "cell-a" });
  api = cloud.cell("cell-a").url;
  await ok(api, ws.key, "POST", "/v1/groups", { name: "app" });
}, 120_000);
afterAll(async () => {
  for (const s of servers) s.close();
  await cloud?.stop();
});

async function call(key: string, method: string, path: string, body?: unknown, base = api) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : (JSON.parse(text) as any) };
}

const make = async (name: string, type: string) =>
  (await ok(api, ws.key, "POST", "/v1/primitives", { name, type, group: "app" })).id as string;

describe("a group's changes reach its endpoint", () => {
  it("every type's changes, signed, once or more, through a SIGKILL and restart of the api; never a value", async () => {
    const hook = await receiver();
    const kv = await make("cache", "kv");
    const created = await call(ws.key, "POST", "/v1/webhooks", { url: hook.url, group: "app" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect((await call(ws.key, "GET", `/v1/webhooks/${created.body.id}`)).body.secret).toBeUndefined();
    const store = await make("files", "storage");
    const vault = await make("keys", "vault");
    const queue = await make("jobs", "queue");
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/user:1`, { value: "one" });
    await ok(api, ws.key, "PUT", `/v1/primitives/${vault}/secrets/STRIPE_KEY`, { value: "sk_live_do_not_leak" });
    await ok(api, ws.key, "POST", `/v1/primitives/${queue}/queues/work/messages`, { body: { n: 1 } });
    const put = await fetch(`${api}/v1/primitives/${store}/objects/a.txt`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "text/plain" },
      body: "hello",
    });
    expect(put.status).toBe(200);
    await ok(api, ws.key, "DELETE", `/v1/primitives/${kv}/keys/user:1`);
    const first = ["kv:set:user:1", "vault:set:STRIPE_KEY", "queue:send", "storage:put:a.txt", "kv:delete:user:1"];
    const seen = () =>
      new Set(
        hook.got.map((r) => {
          const { data } = JSON.parse(r.body);
          const subject = data.change.key ?? data.change.name ?? data.change.path;
          return [data.primitive.type, data.change.op, subject].filter((x) => x !== undefined).join(":");
        }),
      );
    await until("the first changes", () => first.every((c) => seen().has(c)));
    // The api dies mid-stream; changes made while it is down wait in the primitives' logs.
    const cell = cloud.cell("cell-a");
    await cell.process.kill("SIGKILL");
    const restarted = await startApiProcess(cell.env, 90_000);
    cell.process = restarted;
    api = restarted.url;
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/user:2`, { value: "two" });
    await ok(api, ws.key, "DELETE", `/v1/primitives/${vault}/secrets/STRIPE_KEY`);
    // Killed mid-round, the old process may still hold the endpoint's lease: up to 15 s.
    await until(
      "the changes after the restart",
      () => seen().has("kv:set:user:2") && seen().has("vault:delete:STRIPE_KEY"),
      45_000,
    );
    for (const r of hook.got) {
      expect(genuine(secret, r), r.body).toBe(true);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.body).not.toContain("sk_live_do_not_leak");
      expect(r.body).not.toContain('"one"');
      const { type, data } = JSON.parse(r.body);
      expect(type).toBe("prim.change");
      expect(r.headers["webhook-id"]).toBe(`${data.primitive.id}.${data.change.epoch}.${data.change.seq}`);
      expect(data.group).toBe("app");
    }
    // Each primitive's changes arrive in their commit order (a retry may repeat, never reorder).
    const kvSeqs = hook.got
      .map((r) => JSON.parse(r.body).data)
      .filter((d) => d.primitive.id === kv)
      .map((d) => d.change.seq);
    expect([...new Set(kvSeqs)]).toEqual([...new Set(kvSeqs)].sort((a, b) => a - b));
    // The delivery log names every one, delivered. A delivery is marked after its receiver answers,
    // and one in flight at the SIGKILL is sent again once the dead process's lease lapses, so the
    // log settles a moment after the receiver has seen everything.
    const statuses = async () => {
      const log = await call(ws.key, "GET", `/v1/webhooks/${created.body.id}/deliveries`);
      expect(log.status).toBe(200);
      return (log.body.data as { status: string }[]).map((d) => d.status);
    };
    const end = Date.now() + 45_000;
    let last = await statuses();
    while (!last.every((s) => s === "delivered") && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      last = await statuses();
    }
    expect(last.length).toBeGreaterThanOrEqual(7);
    expect(
      last.filter((s) => s !== "delivered"),
      JSON.stringify(last),
    ).toEqual([]);
    expect((await call(ws.key, "DELETE", `/v1/webhooks/${created.body.id}`)).status).toBe(204);
  }, 180_000);

  it("a filter narrows by type, operation and key prefix", async () => {
    const hook = await receiver();
    const kv = await make("filtered", "kv");
    const made = await call(ws.key, "POST", "/v1/webhooks", {
      url: hook.url,
      primitive: kv,
      filter: { types: ["kv"], ops: ["set"], prefix: "user:" },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/session:1`, { value: 1 });
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/user:7`, { value: 1 });
    await ok(api, ws.key, "DELETE", `/v1/primitives/${kv}/keys/user:7`);
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/user:8`, { value: 1 });
    await until("user:8", () => hook.got.some((r) => r.body.includes("user:8")));
    const keys = hook.got.map((r) => JSON.parse(r.body).data.change);
    expect(keys.map((c) => `${c.op}:${c.key}`)).toEqual(["set:user:7", "set:user:8"]);
    expect((await call(ws.key, "DELETE", `/v1/webhooks/${made.body.id}`)).status).toBe(204);
  }, 60_000);

  it("a failing receiver is retried with the same webhook-id; a delivery is sent again by hand", async () => {
    const hook = await receiver();
    hook.status.next = 503;
    const kv = await make("flaky", "kv");
    const made = await call(ws.key, "POST", "/v1/webhooks", { url: hook.url, primitive: kv });
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/a`, { value: 1 });
    await until("a failed attempt", () => hook.got.length >= 1);
    let failed = await call(ws.key, "GET", `/v1/webhooks/${made.body.id}/deliveries`);
    for (let i = 0; i < 100 && failed.body.data[0]?.attempts !== 1; i++) {
      await new Promise((r) => setTimeout(r, 50));
      failed = await call(ws.key, "GET", `/v1/webhooks/${made.body.id}/deliveries`);
    }
    expect(failed.body.data[0]).toMatchObject({ status: "pending", attempts: 1, last_status: 503 });
    expect(failed.body.data[0].next_attempt_at).toBeGreaterThan(Date.now());
    // The receiver recovers: the retry (5 s later) carries the same id.
    hook.status.next = 200;
    await until("the retry", () => hook.got.length >= 2, 20_000);
    expect(hook.got[1]?.headers["webhook-id"]).toBe(hook.got[0]?.headers["webhook-id"]);
    let delivered = await call(ws.key, "GET", `/v1/webhooks/${made.body.id}/deliveries`);
    for (let i = 0; i < 100 && delivered.body.data[0]?.status !== "delivered"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      delivered = await call(ws.key, "GET", `/v1/webhooks/${made.body.id}/deliveries`);
    }
    expect(delivered.body.data[0]).toMatchObject({ status: "delivered", attempts: 2, last_status: 200 });
    // By hand: the same id and body once more.
    const again = await call(
      ws.key,
      "POST",
      `/v1/webhooks/${made.body.id}/deliveries/${delivered.body.data[0].id}/redeliver`,
    );
    expect(again.status).toBe(202);
    await until("the redelivery", () => hook.got.length >= 3);
    expect(hook.got[2]?.headers["webhook-id"]).toBe(hook.got[0]?.headers["webhook-id"]);
    expect(hook.got[2]?.body).toBe(hook.got[0]?.body);
    expect((await call(ws.key, "DELETE", `/v1/webhooks/${made.body.id}`)).status).toBe(204);
  }, 60_000);
});

describe("with the SDK", () => {
  it("creates, lists, reads the log and deletes; a receiver verifies with verifyWebhook", async () => {
    const hook = await receiver();
    const prim = new PrimClient({ baseUrl: api, token: ws.key });
    const kv = await make("sdk", "kv");
    const made = await prim.webhooks.create({ url: hook.url, primitive: kv, description: "cache busting" });
    expect((await prim.webhooks.list()).map((w) => w.id)).toContain(made.id);
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/x`, { value: 1 });
    const got = await until("the delivery", () => hook.got[0]);
    expect(await verifyWebhook(made.secret, got.headers as Record<string, string>, got.body)).toBe(true);
    expect(await verifyWebhook(made.secret, got.headers as Record<string, string>, `${got.body} `)).toBe(false);
    const log = await prim.webhooks.deliveries(made.id);
    expect(log.map((d) => d.message_id)).toEqual([got.headers["webhook-id"]]);
    await prim.webhooks.delete(made.id);
    await expect(prim.webhooks.get(made.id)).rejects.toMatchObject({ code: "not_found" });
  }, 60_000);
});

describe("a restore", () => {
  it("tells the receiver with prim.gap, then goes on in the new epoch: no change of the new one is lost", async () => {
    const hook = await receiver();
    const kv = await make("rewound", "kv");
    const made = await call(ws.key, "POST", "/v1/webhooks", { url: hook.url, primitive: kv });
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/a`, { value: 1 });
    await ok(api, ws.key, "POST", `/v1/primitives/${kv}/snapshots`, { name: "s1" });
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/b`, { value: 1 });
    const bodies = () => hook.got.map((r) => JSON.parse(r.body));
    await until("b", () => bodies().some((b) => b.data?.change?.key === "b"));
    await ok(api, ws.key, "POST", `/v1/primitives/${kv}/restore`, { snapshot: "s1" });
    // After the restore, seq 2 names a new change (c), not b: the epoch tells them apart.
    await ok(api, ws.key, "PUT", `/v1/primitives/${kv}/keys/c`, { value: 1 });
    await until("c", () => bodies().some((b) => b.data?.change?.key === "c"));
    const gap = bodies().findIndex((b) => b.type === "prim.gap");
    expect(gap).toBeGreaterThan(0);
    expect(bodies()[gap].data.reason).toContain("restored");
    const b = bodies().find((x) => x.data?.change?.key === "b").data.change;
    const c = bodies().find((x) => x.data?.change?.key === "c").data.change;
    expect(c.seq).toBe(b.seq);
    expect(c.epoch).toBe(b.epoch + 1);
    expect(bodies().findIndex((x) => x.data?.change?.key === "c")).toBeGreaterThan(gap);
    for (const r of hook.got) expect(genuine(made.body.secret, r)).toBe(true);
    expect((await call(ws.key, "DELETE", `/v1/webhooks/${made.body.id}`)).status).toBe(204);
  }, 60_000);
});

describe("who may manage webhooks", () => {
  it("Starter, a scoped key, a read-only key and another workspace are refused; the rightful key succeeds", async () => {
    const hook = await receiver();
    const listed = async () =>
      ((await call(ws.key, "GET", "/v1/webhooks")).body.data as { id: string }[]).map((w) => w.id).sort();
    const earlier = await listed();
    const mine = await call(ws.key, "POST", "/v1/webhooks", { url: hook.url, group: "app" });
    expect(mine.status).toBe(201);
    const scoped = await createKey(cloud.pool, { workspace: ws.id, group: "app" });
    expect((await call(scoped.key, "POST", "/v1/webhooks", { url: hook.url, group: "app" })).status).toBe(403);
    expect((await call(scoped.key, "GET", "/v1/webhooks")).status).toBe(403);
    const reader = await createKey(cloud.pool, { workspace: ws.id, readOnly: true });
    expect((await call(reader.key, "DELETE", `/v1/webhooks/${mine.body.id}`)).status).toBe(403);
    expect((await call(reader.key, "GET", "/v1/webhooks")).status).toBe(200);
    const other = await cloud.workspace("other", "pro", { on: "cell-a" });
    expect((await call(other.key, "GET", `/v1/webhooks/${mine.body.id}`)).status).toBe(404);
    expect((await call(other.key, "DELETE", `/v1/webhooks/${mine.body.id}`)).status).toBe(404);
    expect((await call(other.key, "GET", `/v1/webhooks/${mine.body.id}/deliveries`)).status).toBe(404);
    // Their group named "app" is theirs: an endpoint for it is made in their workspace, not ours.
    await ok(api, other.key, "POST", "/v1/groups", { name: "app" });
    expect((await call(other.key, "GET", "/v1/webhooks")).body.data).toEqual([]);
    const starter = await cloud.workspace("cheap", "starter", { on: "cell-a" });
    await ok(api, starter.key, "POST", "/v1/groups", { name: "app" });
    const refused = await call(starter.key, "POST", "/v1/webhooks", { url: hook.url, group: "app" });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("plan_limit");
    // Bad input: a clear 400 in the spec's shape, nothing made.
    for (const body of [
      { url: "ftp://example.com/x", group: "app" },
      { url: "http://user:pw@127.0.0.1/x", group: "app" },
      { url: hook.url },
      { url: hook.url, group: "app", primitive: "prm_x" },
      { url: hook.url, group: "app", filter: { types: ["table"] } },
      { url: hook.url, group: "app", extra: 1 },
    ]) {
      const bad = await call(ws.key, "POST", "/v1/webhooks", body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.code).toBe("invalid_request");
    }
    expect(await listed()).toEqual([...earlier, mine.body.id].sort());
    expect((await call(ws.key, "DELETE", `/v1/webhooks/${mine.body.id}`)).status).toBe(204);
  }, 60_000);
});
