import { describe, expect, it } from "vitest";
import { JOB_FIELDS, withQueue } from "./queue-helpers.js";

describe("queue: send, receive, settle", () => {
  it("sends a job (201) and receives it with a lease token", async () => {
    const s = await withQueue();
    const sent = await s.send("emails", { body: { to: "a@example.com" } });
    expect(sent.status).toBe(201);
    expect(Object.keys(sent.body).sort()).toEqual([...JOB_FIELDS, "deduplicated"].sort());
    expect(sent.body).toMatchObject({
      queue: "emails",
      body: { to: "a@example.com" },
      status: "ready",
      attempts: 0,
      max_attempts: 5,
      priority: 0,
      deduplicated: false,
      lease_expires_at: null,
      created_at: s.clock.now(),
    });
    expect(sent.body.id).toMatch(/^job_[0-9a-z]{26}$/);

    const got = await s.receive("emails", { lease: "10s" });
    expect(got.status).toBe(200);
    expect(got.body.data).toHaveLength(1);
    const [job] = got.body.data;
    expect(job).toMatchObject({ id: sent.body.id, status: "leased", attempts: 1 });
    expect(job.lease_expires_at).toBe(s.clock.now() + 10_000);
    expect(typeof job.lease_token).toBe("string");

    // A second receiver gets nothing while the lease holds.
    expect((await s.receive("emails")).body.data).toEqual([]);

    const acked = await s.settle("emails", job.id, { lease_token: job.lease_token });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ status: "done", lease_expires_at: null });
    expect(acked.body.lease_token).toBeUndefined();
    expect((await s.job("emails", job.id)).body.status).toBe("done");
  });

  it("receives highest priority first, then oldest, up to max", async () => {
    const s = await withQueue();
    const low = await s.send("q", { body: 1, priority: -5 });
    const a = await s.send("q", { body: 2 });
    s.clock.advance(1);
    const b = await s.send("q", { body: 3 });
    const high = await s.send("q", { body: 4, priority: 10 });
    const got = await s.receive("q", { max: 3 });
    expect(got.body.data.map((j: { id: string }) => j.id)).toEqual([high.body.id, a.body.id, b.body.id]);
    expect((await s.receive("q", { max: 10 })).body.data.map((j: { id: string }) => j.id)).toEqual([low.body.id]);
  });

  it("delays a job: string durations and integer milliseconds", async () => {
    const s = await withQueue();
    const sent = await s.send("q", { body: "later", delay: "5s" });
    expect(sent.body.available_at).toBe(s.clock.now() + 5000);
    await s.send("q", { body: "ms", delay: 1500 });
    expect((await s.receive("q")).body.data).toEqual([]);
    s.clock.advance(1500);
    expect((await s.receive("q")).body.data.map((j: { body: unknown }) => j.body)).toEqual(["ms"]);
    s.clock.advance(3500);
    expect((await s.receive("q")).body.data.map((j: { body: unknown }) => j.body)).toEqual(["later"]);
  });

  it("dedupes on dedupe_key while the first job is pending, not after it is done", async () => {
    const s = await withQueue();
    const first = await s.send("q", { body: 1, dedupe_key: "order-7" });
    const again = await s.send("q", { body: 2, dedupe_key: "order-7" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, body: 1, deduplicated: true });
    // Another queue has its own keys.
    expect((await s.send("other", { body: 1, dedupe_key: "order-7" })).status).toBe(201);
    // Still deduplicated while leased.
    const [job] = (await s.receive("q")).body.data;
    expect((await s.send("q", { body: 3, dedupe_key: "order-7" })).status).toBe(200);
    await s.settle("q", job.id, { lease_token: job.lease_token });
    const fresh = await s.send("q", { body: 4, dedupe_key: "order-7" });
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
  });

  it("lists queues with counts by status, and jobs by status with paging", async () => {
    const s = await withQueue();
    for (let i = 0; i < 5; i++) await s.send("a", { body: i });
    await s.send("a", { body: "later", delay: "1h" });
    await s.send("b", { body: "x" });
    const [leased] = (await s.receive("a")).body.data;
    const [done] = (await s.receive("a")).body.data;
    await s.settle("a", done.id, { lease_token: done.lease_token });
    const queues = await s.api("GET", `${s.base}/queues`);
    expect(queues.status).toBe(200);
    expect(queues.body.data).toEqual([
      { name: "a", ready: 4, delayed: 1, leased: 1, done: 1, dead: 0 },
      { name: "b", ready: 1, delayed: 0, leased: 0, done: 0, dead: 0 },
    ]);
    const page1 = await s.api("GET", `${s.base}/queues/a/messages?limit=2`);
    expect(page1.body.data.map((j: { body: unknown }) => j.body)).toEqual([0, 1]);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await s.api("GET", `${s.base}/queues/a/messages?limit=10&cursor=${page1.body.next_cursor}`);
    expect(page2.body.data.map((j: { body: unknown }) => j.body)).toEqual([2, 3, 4, "later"]);
    expect(page2.body.next_cursor).toBeNull();
    const leasedList = await s.api("GET", `${s.base}/queues/a/messages?status=leased`);
    expect(leasedList.body.data.map((j: { id: string }) => j.id)).toEqual([leased.id]);
    expect(leasedList.body.data[0].lease_token).toBeUndefined();
    const stats = await s.api("GET", `/v1/primitives/${s.queue.id}/stats`);
    expect(stats.body.items).toBe(6); // a: ready 4 (one delayed) + leased 1; b: ready 1
  });

  it("answers 404 for an unknown job and 400 for bad input, in the error shape", async () => {
    const s = await withQueue();
    const missing = await s.job("q", "job_nope");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect(missing.body.error.message).toContain("job_nope");
    const cases: [string, Record<string, unknown>, string][] = [
      ["q", {}, "body"],
      ["q", { body: 1, delay: "soon" }, "delay"],
      ["q", { body: 1, priority: 1.5 }, "priority"],
      ["q", { body: 1, max_attempts: 0 }, "max_attempts"],
      ["q", { body: 1, extra: true }, "extra"],
      ["Bad_Name", { body: 1 }, "queue"],
    ];
    for (const [queue, body, field] of cases) {
      const res = await s.send(queue, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain(field);
    }
    const bad = await s.receive("q", { wait: "31s" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("wait");
    const badMax = await s.receive("q", { max: 101 });
    expect(badMax.status).toBe(400);
  });

  it("refuses a body over 256 KiB with 413 and keeps nothing", async () => {
    const s = await withQueue();
    const res = await s.send("q", { body: "x".repeat(256 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect((await s.api("GET", `${s.base}/queues/q/messages`)).body.data).toEqual([]);
    const pub = await s.api("POST", `${s.base}/topics/t/publish`, { body: "x".repeat(256 * 1024) });
    expect(pub.status).toBe(413);
  });

  it("applies to queue primitives only", async () => {
    const s = await withQueue();
    const { LOCAL_PRINCIPAL } = await import("@prim/engine");
    const kv = await s.engine.invoke<{ id: string }>(LOCAL_PRINCIPAL, "primitive.create", null, {
      name: "cache",
      type: "kv",
      group: "app",
    });
    const res = await s.api("POST", `/v1/primitives/${kv.id}/queues/q/messages`, { body: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("wrong_type");
  });
});
