import { LOCAL_PRINCIPAL, type Principal } from "@prim/engine";
import { describe, expect, it, vi } from "vitest";
import { withQueue } from "./queue-helpers.js";

/** Resolves once `n` receives are parked on `queue`: an explicit event, not a sleep. */
async function parked(s: Awaited<ReturnType<typeof withQueue>>, queue: string, n: number) {
  // The queue primitive's handle (engine-internal, not exported): its long-poll waiters.
  const { waiters } = s.engine.services.files.handle(s.queue.id, "queue").store as {
    waiters: { parked(queue: string): number };
  };
  await vi.waitFor(() => expect(waiters.parked(queue)).toBe(n), { timeout: 10_000, interval: 5 });
}

describe("queue: long poll", () => {
  it("a parked receive returns as soon as a job is sent, not at its deadline", async () => {
    const s = await withQueue();
    // The wait outlasts the test's timeout: only the send can answer this receive in time.
    const pending = s.receive("q", { wait: "30s" });
    await parked(s, "q", 1);
    const sent = await s.send("q", { body: "wake" });
    const got = await pending;
    expect(got.body.data.map((j: { id: string }) => j.id)).toEqual([sent.body.id]);
    expect(got.body.data[0].lease_token).toEqual(expect.any(String));
    await parked(s, "q", 0);
  });

  it("returns an empty list at the deadline (real time), integer ms accepted", async () => {
    const s = await withQueue();
    const pending = s.receive("q", { wait: 300 });
    await parked(s, "q", 1);
    const got = await pending;
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual([]);
    await parked(s, "q", 0);
    // The receiver that left takes nothing: a job sent now stays ready for the next receive.
    const sent = await s.send("q", { body: 1 });
    expect((await s.job("q", sent.body.id)).body.status).toBe("ready");
  });

  it("wakes when a delay passes and when a lease runs out (engine clock)", async () => {
    const s = await withQueue();
    const delayed = await s.send("q", { body: "d", delay: "10s" });
    const pending = s.receive("q", { wait: "20s", lease: "5s" });
    await parked(s, "q", 1);
    s.clock.advance(10_000);
    const first = await pending;
    expect(first.body.data.map((j: { id: string }) => j.id)).toEqual([delayed.body.id]);

    const again = s.receive("q", { wait: "20s" });
    await parked(s, "q", 1);
    s.clock.advance(5000); // the first lease runs out
    const second = await again;
    expect(second.body.data.map((j: { id: string; attempts: number }) => [j.id, j.attempts])).toEqual([
      [delayed.body.id, 2],
    ]);
  });

  it("serves parked receivers in arrival order, each job once, and wakes on retry, requeue and publish", async () => {
    const s = await withQueue();
    const a = s.receive("q", { wait: "10s" });
    await parked(s, "q", 1);
    const b = s.receive("q", { wait: "10s" });
    await parked(s, "q", 2);
    await s.send("q", { body: 1 });
    const gotA = await a;
    expect(gotA.body.data.map((j: { body: number }) => j.body)).toEqual([1]);
    const job = gotA.body.data[0];
    await parked(s, "q", 1);
    await s.settle("q", job.id, { lease_token: job.lease_token, action: "retry", in: 0 });
    const gotB = await b;
    expect(gotB.body.data.map((j: { id: string }) => j.id)).toEqual([job.id]);

    await s.settle("q", job.id, { lease_token: gotB.body.data[0].lease_token, action: "dead" });
    const c = s.receive("q", { wait: "10s" });
    await parked(s, "q", 1);
    await s.api("POST", `${s.base}/queues/q/messages/${job.id}/requeue`);
    expect((await c).body.data.map((j: { id: string }) => j.id)).toEqual([job.id]);

    await s.api("POST", `${s.base}/topics/news/subscriptions`, { queue: "q" });
    const d = s.receive("q", { wait: "10s" });
    await parked(s, "q", 1);
    await s.api("POST", `${s.base}/topics/news/publish`, { body: "extra" });
    expect((await d).body.data.map((j: { body: string }) => j.body)).toEqual(["extra"]);
  });

  it("a receiver that hangs up leaves the queue: the next job goes to a live receiver", async () => {
    const s = await withQueue();
    const controller = new AbortController();
    const gone = fetch(`${s.url}${s.base}/queues/q/receive`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wait: "10s" }),
      signal: controller.signal,
    }).catch(() => "aborted");
    await parked(s, "q", 1);
    controller.abort();
    expect(await gone).toBe("aborted");
    await parked(s, "q", 0);
    const live = s.receive("q", { wait: "10s" });
    await parked(s, "q", 1);
    const sent = await s.send("q", { body: 1 });
    expect((await live).body.data.map((j: { id: string }) => j.id)).toEqual([sent.body.id]);
  });

  it("concurrent receivers never get the same job while it is leased", async () => {
    const s = await withQueue();
    const total = 200;
    for (let i = 0; i < total; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => s.send("q", { body: i + j })));
    }
    const seen = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (;;) {
          const got = await s.receive("q", { max: 3 });
          if (got.body.data.length === 0) return;
          for (const job of got.body.data) seen.set(job.id, (seen.get(job.id) ?? 0) + 1);
        }
      }),
    );
    expect(seen.size).toBe(total);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });
});

describe("queue: topics", () => {
  it("publish delivers one job to each subscribed queue, in one commit", async () => {
    const s = await withQueue();
    const sub = await s.api("POST", `${s.base}/topics/orders/subscriptions`, { queue: "billing" });
    expect(sub.status).toBe(201);
    expect(sub.body).toEqual({ topic: "orders", queue: "billing", created_at: s.clock.now() });
    expect((await s.api("POST", `${s.base}/topics/orders/subscriptions`, { queue: "billing" })).status).toBe(200);
    await s.api("POST", `${s.base}/topics/orders/subscriptions`, { queue: "shipping" });
    const pub = await s.api("POST", `${s.base}/topics/orders/publish`, { body: { order: 7 } });
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({ delivered: 2 });
    for (const queue of ["billing", "shipping"]) {
      const jobs = (await s.api("GET", `${s.base}/queues/${queue}/messages`)).body.data;
      expect(jobs.map((j: { body: unknown }) => j.body)).toEqual([{ order: 7 }]);
    }
    const unsub = await s.api("DELETE", `${s.base}/topics/orders/subscriptions/billing`);
    expect(unsub.status).toBe(204);
    expect((await s.api("POST", `${s.base}/topics/orders/publish`, { body: 2 })).body).toEqual({ delivered: 1 });
    const again = await s.api("DELETE", `${s.base}/topics/orders/subscriptions/billing`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
    expect((await s.api("POST", `${s.base}/topics/empty/publish`, { body: 1 })).body).toEqual({ delivered: 0 });
    const bad = await s.api("POST", `${s.base}/topics/orders/subscriptions`, { queue: "Not Valid" });
    expect(bad.status).toBe(400);
  });
});

describe("queue: policy", () => {
  it("maps each route to its allowlist tool", async () => {
    let scoped: Principal = LOCAL_PRINCIPAL;
    const s = await withQueue({
      authenticate: (req) => (req.headers.authorization === "Bearer k" ? scoped : LOCAL_PRINCIPAL),
    });
    const group = (await s.api("GET", "/v1/groups/app")).body;
    const as = (tools: string[]) => {
      scoped = { kind: "scoped", workspace: "local", actor: "key:key_q", groupId: group.id, tools };
    };
    const call = (method: string, path: string, body?: unknown) =>
      s.api(method, `${s.base}${path}`, body, { authorization: "Bearer k" });
    as(["queue_receive", "queue_ack"]);
    const denied = await call("POST", "/queues/q/messages", { body: 1 });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("tool_not_allowed");
    expect((await call("POST", "/topics/t/publish", { body: 1 })).status).toBe(403);
    as(["queue_send"]);
    expect((await call("POST", "/queues/q/messages", { body: 1 })).status).toBe(201);
    for (const [method, path] of [
      ["POST", "/queues/q/receive"],
      ["GET", "/queues"],
      ["GET", "/queues/q/messages"],
      ["POST", "/topics/t/subscriptions"],
    ]) {
      expect(
        (await call(method as string, path as string, method === "POST" ? { queue: "q" } : undefined)).body.error.code,
      ).toBe("tool_not_allowed");
    }
    as(["queue_receive"]);
    const [job] = (await call("POST", "/queues/q/receive", {})).body.data;
    expect((await call("POST", `/queues/q/messages/${job.id}/ack`, { lease_token: job.lease_token })).status).toBe(403);
    as(["queue_ack"]);
    expect((await call("POST", `/queues/q/messages/${job.id}/ack`, { lease_token: job.lease_token })).status).toBe(200);
    expect((await call("POST", "/queues/q/purge", { status: "done" })).body).toEqual({ purged: 1 });
  });

  it("answers 423 on every queue route while paused; stats still work", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1 });
    await s.engine.services.catalog.updatePrimitive(s.queue.id, { paused: true });
    for (const [method, path, body] of [
      ["POST", "/queues/q/messages", { body: 1 }],
      ["POST", "/queues/q/receive", {}],
      ["GET", "/queues", undefined],
      ["GET", "/queues/q/messages", undefined],
      ["POST", "/topics/t/publish", { body: 1 }],
    ] as const) {
      const res = await s.api(method, `${s.base}${path}`, body);
      expect(res.status, path).toBe(423);
      expect(res.body.error.code).toBe("paused");
    }
    const stats = await s.api("GET", `${s.base}/stats`);
    expect(stats.body).toMatchObject({ items: 1, paused: true });
  });

  it("audits queue calls without job bodies", async () => {
    const s = await withQueue();
    await s.send("q", { body: { secret: "do-not-log" } });
    await s.receive("q");
    await s.engine.services.audit.flush();
    const entries = await s.engine.services.catalog.listAudit({ group: "app", limit: 50 });
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(["queue.send", "queue.receive"]));
    expect(JSON.stringify(entries)).not.toContain("do-not-log");
  });
});
