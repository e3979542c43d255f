import { onCloudTarget } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { withQueue } from "./queue-helpers.js";

type Q = Awaited<ReturnType<typeof withQueue>>;

async function leaseOne(s: Q, queue = "q", lease = "10s") {
  const [job] = (await s.receive(queue, { lease })).body.data;
  expect(job, "a job was received").toBeDefined();
  return job as { id: string; lease_token: string; attempts: number };
}

describe("queue: settle actions and attempts", () => {
  it("retry puts the job back after `in`; the attempt counts", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1, max_attempts: 3 });
    const job = await leaseOne(s);
    const retried = await s.settle("q", job.id, {
      lease_token: job.lease_token,
      action: "retry",
      in: "2s",
      error: "boom",
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      status: "ready",
      attempts: 1,
      last_error: "boom",
      available_at: s.clock.now() + 2000,
    });
    expect((await s.receive("q")).body.data).toEqual([]);
    s.clock.advance(2000);
    const again = await leaseOne(s);
    expect(again.attempts).toBe(2);
  });

  it("retry without `in` backs off exponentially (1s, 2s, 4s …)", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1, max_attempts: 10 });
    for (const expected of [1000, 2000, 4000]) {
      const job = await leaseOne(s);
      const res = await s.settle("q", job.id, { lease_token: job.lease_token, action: "retry" });
      expect(res.body.available_at - s.clock.now()).toBe(expected);
      s.clock.advance(expected);
    }
  });

  it("fail retries while attempts remain, then the job is dead", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1, max_attempts: 2 });
    let job = await leaseOne(s);
    const first = await s.settle("q", job.id, { lease_token: job.lease_token, action: "fail", error: "e1", in: 0 });
    expect(first.body).toMatchObject({ status: "ready", attempts: 1 });
    job = await leaseOne(s);
    const second = await s.settle("q", job.id, { lease_token: job.lease_token, action: "fail", error: "e2" });
    expect(second.body).toMatchObject({ status: "dead", attempts: 2, last_error: "e2" });
    expect((await s.receive("q")).body.data).toEqual([]);
  });

  it("dead dead-letters at once; requeue makes it ready with fresh attempts; requeue of others is 409", async () => {
    const s = await withQueue();
    const sent = await s.send("q", { body: 1 });
    const notDead = await s.api("POST", `${s.base}/queues/q/messages/${sent.body.id}/requeue`);
    expect(notDead.status).toBe(409);
    expect(notDead.body.error.code).toBe("conflict");
    const job = await leaseOne(s);
    const dead = await s.settle("q", job.id, { lease_token: job.lease_token, action: "dead", error: "poison" });
    expect(dead.body).toMatchObject({ status: "dead", last_error: "poison" });
    const requeued = await s.api("POST", `${s.base}/queues/q/messages/${job.id}/requeue`);
    expect(requeued.status).toBe(200);
    expect(requeued.body).toMatchObject({ status: "ready", attempts: 0, available_at: s.clock.now() });
    expect((await leaseOne(s)).id).toBe(job.id);
    const unknown = await s.api("POST", `${s.base}/queues/q/messages/job_missing/requeue`);
    expect(unknown.status).toBe(404);
  });

  it("a wrong lease token is 409 conflict; a settled job cannot be settled again", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1 });
    const job = await leaseOne(s);
    const wrong = await s.settle("q", job.id, { lease_token: "1.forged" });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.code).toBe("conflict");
    expect((await s.job("q", job.id)).body.status).toBe("leased");
    expect((await s.settle("q", job.id, { lease_token: job.lease_token })).status).toBe(200);
    const twice = await s.settle("q", job.id, { lease_token: job.lease_token });
    expect(twice.status).toBe(409);
    expect(twice.body.error.message).toContain("already settled");
    const missingToken = await s.settle("q", job.id, {});
    expect(missingToken.status).toBe(400);
    expect(missingToken.body.error.message).toContain("lease_token");
  });

  it("a lease that ran out: the job is ready again (attempt counted); settling answers 410 and changes nothing", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1, max_attempts: 3 });
    const job = await leaseOne(s, "q", "5s");
    s.clock.advance(5000);
    const before = (await s.job("q", job.id)).body;
    expect(before).toMatchObject({ status: "ready", attempts: 1, lease_expires_at: null });
    for (const action of ["ack", "retry", "fail", "dead"]) {
      const late = await s.settle("q", job.id, { lease_token: job.lease_token, action });
      expect(late.status).toBe(410);
      expect(late.body.error.code).toBe("lease_expired");
    }
    const hb = await s.api("POST", `${s.base}/queues/q/messages/${job.id}/heartbeat`, { lease_token: job.lease_token });
    expect(hb.status).toBe(410);
    expect((await s.job("q", job.id)).body).toEqual(before);
    // Received again by someone else; the first token stays expired.
    const second = await leaseOne(s);
    expect(second.attempts).toBe(2);
    expect((await s.settle("q", job.id, { lease_token: job.lease_token })).status).toBe(410);
    expect((await s.settle("q", job.id, { lease_token: second.lease_token })).status).toBe(200);
  });

  it("exhausting max_attempts through expired leases makes the job dead", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1, max_attempts: 2 });
    await leaseOne(s, "q", "1s");
    s.clock.advance(1000);
    const job = await leaseOne(s, "q", "1s");
    s.clock.advance(1000);
    const dead = (await s.job("q", job.id)).body;
    expect(dead).toMatchObject({ status: "dead", attempts: 2 });
    expect(dead.last_error).toContain("lease expired");
    const queues = (await s.api("GET", `${s.base}/queues`)).body.data;
    expect(queues[0]).toMatchObject({ dead: 1, ready: 0, leased: 0 });
  });

  it("heartbeat extends the lease (by `extend`, else the lease's own length)", async () => {
    const s = await withQueue();
    await s.send("q", { body: 1 });
    const job = await leaseOne(s, "q", "10s");
    s.clock.advance(8000);
    const hb = await s.api("POST", `${s.base}/queues/q/messages/${job.id}/heartbeat`, { lease_token: job.lease_token });
    expect(hb.status).toBe(200);
    expect(hb.body.lease_expires_at).toBe(s.clock.now() + 10_000);
    expect(hb.body.lease_token).toBe(job.lease_token);
    s.clock.advance(8000);
    const longer = await s.api("POST", `${s.base}/queues/q/messages/${job.id}/heartbeat`, {
      lease_token: job.lease_token,
      extend: "1m",
    });
    expect(longer.body.lease_expires_at).toBe(s.clock.now() + 60_000);
    s.clock.advance(59_000);
    expect((await s.settle("q", job.id, { lease_token: job.lease_token })).status).toBe(200);
  });

  it("purge deletes done or dead jobs, optionally only older ones", async () => {
    const s = await withQueue();
    for (let i = 0; i < 3; i++) await s.send("q", { body: i });
    const a = await leaseOne(s);
    await s.settle("q", a.id, { lease_token: a.lease_token });
    s.clock.advance(60_000);
    const b = await leaseOne(s);
    await s.settle("q", b.id, { lease_token: b.lease_token });
    const c = await leaseOne(s);
    await s.settle("q", c.id, { lease_token: c.lease_token, action: "dead" });
    const old = await s.api("POST", `${s.base}/queues/q/purge`, { status: "done", older_than: "30s" });
    expect(old.body).toEqual({ purged: 1 });
    expect((await s.job("q", a.id)).status).toBe(404);
    expect((await s.job("q", b.id)).status).toBe(200);
    expect((await s.api("POST", `${s.base}/queues/q/purge`, { status: "dead" })).body).toEqual({ purged: 1 });
    const bad = await s.api("POST", `${s.base}/queues/q/purge`, { status: "ready" });
    expect(bad.status).toBe(400);
  });

  it.skipIf(onCloudTarget())("leased jobs survive a restart and come back when their lease runs out", async () => {
    const s = await withQueue();
    await s.send("q", { body: "persist" });
    const job = await leaseOne(s, "q", "30s");
    const { dataDir, clock } = s;
    await s.close();
    const { startServer } = await import("@prim/testkit/rest");
    const again = await startServer({ dataDir, clock });
    const base = `/v1/primitives/${s.queue.id}`;
    expect((await again.api("GET", `${base}/queues/q/messages/${job.id}`)).body.status).toBe("leased");
    expect((await again.api("POST", `${base}/queues/q/receive`, {})).body.data).toEqual([]);
    clock.advance(30_000);
    const back = await again.api("POST", `${base}/queues/q/receive`, {});
    expect(back.body.data.map((j: { id: string }) => j.id)).toEqual([job.id]);
    expect(back.body.data[0].attempts).toBe(2);
  });
});
