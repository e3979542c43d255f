import { describe, expect, it } from "vitest";
import { JOB_FIELDS, withQueue } from "./queue-helpers.js";

type Entry = Record<string, any>;
const BATCH_JOB_FIELDS = JOB_FIELDS.filter((f) => f !== "body");

async function batchQueue() {
  const s = await withQueue();
  const sendBatch = (q: string, messages: unknown) =>
    s.api("POST", `${s.base}/queues/${q}/messages/batch`, { messages });
  const ackBatch = (q: string, acks: unknown) => s.api("POST", `${s.base}/queues/${q}/ack/batch`, { acks });
  const publishBatch = (topic: string, messages: unknown) =>
    s.api("POST", `${s.base}/topics/${topic}/publish/batch`, { messages });
  const all = async (q: string): Promise<Entry[]> =>
    (await s.api("GET", `${s.base}/queues/${q}/messages?limit=200`)).body.data;
  return { ...s, sendBatch, ackBatch, publishBatch, all };
}

describe("queue batch send", () => {
  it("answers every entry in order: its job, a dedupe hit, or its own error; only the valid ones are written", async () => {
    const s = await batchQueue();
    const pending = await s.send("q", { body: "old", dedupe_key: "taken" });
    const big = "x".repeat(256 * 1024); // its JSON (with quotes) is over 256 KiB
    const res = await s.sendBatch("q", [
      { body: { n: 0 } },
      { body: { n: 1 }, delay: "10s", priority: 7, max_attempts: 2, dedupe_key: "fresh" },
      { body: { n: 2 }, dedupe_key: "taken" },
      { body: { n: 3 }, priority: 5000 },
      { body: big },
      { body: { n: 5 }, dedupe_key: "fresh" },
      { n: 6 },
      { body: { n: 7 }, colour: "red" },
      "not an object",
      { body: null },
    ]);
    expect(res.status).toBe(200);
    const data: Entry[] = res.body.data;
    expect(data).toHaveLength(10);
    expect(Object.keys(data[0] as Entry).sort()).toEqual([...BATCH_JOB_FIELDS, "deduplicated"].sort());
    expect(data[0]).toMatchObject({ queue: "q", status: "ready", priority: 0, max_attempts: 5, deduplicated: false });
    expect(data[1]).toMatchObject({
      priority: 7,
      max_attempts: 2,
      dedupe_key: "fresh",
      available_at: s.clock.now() + 10_000,
      deduplicated: false,
    });
    expect(data[2]).toMatchObject({ id: pending.body.id, deduplicated: true });
    expect(data[3]).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(data[3]?.error.message).toContain("messages[3].priority");
    expect(data[4]).toMatchObject({ status: 413, error: { code: "payload_too_large" } });
    expect(data[4]?.error.message).toContain("messages[4].body");
    // The same key earlier in the batch: the job that entry made.
    expect(data[5]).toMatchObject({ id: data[1]?.id, deduplicated: true });
    expect(data[6]).toEqual({
      status: 400,
      error: { code: "invalid_request", message: expect.stringContaining("messages[6].body: required") },
    });
    expect(data[7]).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(data[7]?.error.message).toContain("messages[7].colour");
    expect(data[8]).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(data[9]).toMatchObject({ deduplicated: false, status: "ready" });

    const stored = await s.all("q");
    expect(stored.map((j) => j.body)).toEqual(["old", { n: 0 }, { n: 1 }, null]);
    expect(stored.map((j) => j.id)).toEqual([pending.body.id, data[0]?.id, data[1]?.id, data[9]?.id]);
  });

  it("answers an entry's error even when every entry fails, and writes nothing", async () => {
    const s = await batchQueue();
    const res = await s.sendBatch("q", [{ delay: "soon" }, { body: 1, max_attempts: 0 }]);
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: Entry) => [e.status, e.error.code])).toEqual([
      [400, "invalid_request"],
      [400, "invalid_request"],
    ]);
    expect(await s.all("q")).toEqual([]);
  });

  it("takes exactly 100 entries; refuses an empty or longer array, a missing one and a bad queue as a whole", async () => {
    const s = await batchQueue();
    const hundred = Array.from({ length: 100 }, (_, i) => ({ body: i }));
    const ok = await s.sendBatch("q", hundred);
    expect(ok.status).toBe(200);
    expect(ok.body.data.filter((e: Entry) => e.deduplicated === false)).toHaveLength(100);
    expect((await s.all("q")).map((j) => j.body)).toEqual(hundred.map((m) => m.body));

    for (const [messages, text] of [
      [[...hundred, { body: 100 }], "at most 100"],
      [[], "at least one"],
      [undefined, "messages: required"],
      [{ body: 1 }, "messages"],
    ] as const) {
      const res = await s.sendBatch("q", messages);
      expect([res.status, res.body.error?.code]).toEqual([400, "invalid_request"]);
      expect(res.body.error.message).toContain(text);
    }
    const badQueue = await s.sendBatch("Bad Name!", [{ body: 1 }]);
    expect([badQueue.status, badQueue.body.error?.code]).toEqual([400, "invalid_request"]);
    expect(await s.all("q")).toHaveLength(100);
  });

  it("sends jobs that receive and settle as single sends do", async () => {
    const s = await batchQueue();
    await s.sendBatch("q", [{ body: "low", priority: -1 }, { body: "high", priority: 9 }, { body: "mid" }]);
    const got = await s.receive("q", { max: 10 });
    expect(got.body.data.map((j: Entry) => j.body)).toEqual(["high", "mid", "low"]);
  });
});

describe("queue batch ack", () => {
  it("settles each entry on its own and answers the single route's codes for the others", async () => {
    const s = await batchQueue();
    await s.sendBatch(
      "q",
      Array.from({ length: 6 }, (_, i) => ({ body: i, max_attempts: 3 })),
    );
    const jobs: Entry[] = (await s.receive("q", { max: 6, lease: "10s" })).body.data;
    const [a, b, c, d, e, f] = jobs as [Entry, Entry, Entry, Entry, Entry, Entry];
    const res = await s.ackBatch("q", [
      { job: a.id, lease_token: a.lease_token },
      { job: b.id, lease_token: b.lease_token, action: "retry", in: "5s" },
      { job: c.id, lease_token: c.lease_token, action: "fail", error: "boom" },
      { job: d.id, lease_token: d.lease_token, action: "dead" },
      { job: e.id, lease_token: "1.wrongwrongwrong" },
      { job: "job_00000000000000000000000000", lease_token: f.lease_token },
      { job: a.id, lease_token: a.lease_token },
      { job: f.id },
      { job: f.id, lease_token: f.lease_token, action: "explode" },
    ]);
    expect(res.status).toBe(200);
    const data: Entry[] = res.body.data;
    expect(Object.keys(data[0] as Entry).sort()).toEqual(BATCH_JOB_FIELDS.sort());
    expect(data[0]).toMatchObject({ id: a.id, status: "done" });
    expect(data[1]).toMatchObject({ id: b.id, status: "ready", available_at: s.clock.now() + 5_000 });
    expect(data[2]).toMatchObject({ id: c.id, status: "ready", last_error: "boom" });
    expect(data[3]).toMatchObject({ id: d.id, status: "dead" });
    expect(data[4]).toMatchObject({ status: 409, error: { code: "conflict" } });
    expect(data[5]).toMatchObject({ status: 404, error: { code: "not_found" } });
    expect(data[6]).toMatchObject({ status: 409, error: { code: "conflict" } }); // settled by entry 0
    expect(data[7]).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(data[7]?.error.message).toContain("acks[7].lease_token");
    expect(data[8]).toMatchObject({ status: 400, error: { code: "invalid_request" } });

    // What the failed entries named is as it was: e and f still leased, settleable.
    expect((await s.job("q", e.id)).body.status).toBe("leased");
    expect((await s.job("q", f.id)).body.status).toBe("leased");
    const again = await s.ackBatch("q", [
      { job: e.id, lease_token: e.lease_token },
      { job: f.id, lease_token: f.lease_token },
    ]);
    expect(again.body.data.map((x: Entry) => x.status)).toEqual(["done", "done"]);
  });

  it("answers 410 lease_expired for a lease that ran out and for a token of an earlier delivery", async () => {
    const s = await batchQueue();
    await s.sendBatch("q", [{ body: 1 }, { body: 2 }]);
    const [x, y] = (await s.receive("q", { max: 2, lease: "1s" })).body.data as [Entry, Entry];
    s.clock.advance(1_500);
    const [y2] = (await s.receive("q", { max: 2, lease: "10s" })).body.data as Entry[];
    expect(y2).toBeDefined();
    const res = await s.ackBatch("q", [
      { job: x.id, lease_token: x.lease_token }, // ran out; x is ready again or leased anew
      { job: y.id, lease_token: y.lease_token },
    ]);
    expect(res.body.data.map((e: Entry) => [e.status, e.error?.code])).toEqual([
      [410, "lease_expired"],
      [410, "lease_expired"],
    ]);
  });

  it("refuses an empty or over-long array and a missing one as a whole", async () => {
    const s = await batchQueue();
    const acks = Array.from({ length: 101 }, () => ({ job: "job_x", lease_token: "t" }));
    for (const body of [acks, [], undefined]) {
      const res = await s.ackBatch("q", body);
      expect([res.status, res.body.error?.code]).toEqual([400, "invalid_request"]);
    }
    const hundred = await s.ackBatch("q", acks.slice(0, 100));
    expect(hundred.status).toBe(200);
    expect(hundred.body.data.every((e: Entry) => e.status === 404)).toBe(true);
  });
});

describe("topic batch publish", () => {
  it("publishes each valid entry to every subscribed queue, in order, in one call", async () => {
    const s = await batchQueue();
    for (const q of ["a", "b"]) await s.api("POST", `${s.base}/topics/news/subscriptions`, { queue: q });
    const res = await s.publishBatch("news", [{ body: 1 }, { text: "no body" }, { body: 3 }]);
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toEqual({ delivered: 2 });
    expect(res.body.data[1]).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(res.body.data[2]).toEqual({ delivered: 2 });
    for (const q of ["a", "b"]) expect((await s.all(q)).map((j) => j.body)).toEqual([1, 3]);
    const none = await s.publishBatch("quiet", [{ body: 1 }]);
    expect(none.body.data).toEqual([{ delivered: 0 }]);
    const empty = await s.publishBatch("news", []);
    expect([empty.status, empty.body.error?.code]).toEqual([400, "invalid_request"]);
  });
});

describe("batches racing single receivers", () => {
  it("never delivers a job twice while batch sends, single receives and batch acks interleave", async () => {
    const s = await batchQueue();
    const BATCHES = 10;
    const received = new Map<string, number>();
    let sent = 0;
    const producers = Array.from({ length: BATCHES }, async (_, b) => {
      const res = await s.sendBatch(
        "race",
        Array.from({ length: 50 }, (_, i) => ({ body: { b, i } })),
      );
      sent += res.body.data.filter((e: Entry) => e.deduplicated === false).length;
    });
    let producing = true;
    const consumer = async (max: number) => {
      for (let idle = 0; idle < 3; ) {
        const jobs: Entry[] = (await s.receive("race", { max, lease: "60s" })).body.data;
        if (jobs.length === 0) {
          if (!producing) idle++;
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        for (const job of jobs) received.set(job.id, (received.get(job.id) ?? 0) + 1);
        const acked = await s.ackBatch(
          "race",
          jobs.map((j) => ({ job: j.id, lease_token: j.lease_token })),
        );
        expect(acked.body.data.every((e: Entry) => e.status === "done")).toBe(true);
      }
    };
    const consumers = [1, 1, 1, 10, 10, 10].map(consumer);
    await Promise.all(producers);
    producing = false;
    await Promise.all(consumers);
    expect(sent).toBe(BATCHES * 50);
    expect(received.size).toBe(BATCHES * 50);
    expect([...received.values()].every((n) => n === 1)).toBe(true);
    const counts = (await s.api("GET", `${s.base}/queues`)).body.data.find((c: Entry) => c.name === "race");
    expect(counts).toMatchObject({ ready: 0, leased: 0, done: BATCHES * 50 });
  });
});
