// queue_send, queue_receive, queue_ack and memory_remember, memory_recall, memory_forget over
// Streamable HTTP: every action, with the structured result checked.
import { expect, it } from "vitest";
import { forEachInvoker, inProcessOnly, withStore } from "./helpers.js";

const p = "store";

forEachInvoker("MCP tools: queue", () => {
  it("queue_send sends; queue_receive receives with a lease token, lists queues and jobs, gets one", async () => {
    const { ok } = await withStore("queue");
    const sent = await ok("queue_send", { primitive: p, queue: "emails", body: { to: "ada" }, priority: 5 });
    expect(sent).toMatchObject({
      queue: "emails",
      body: { to: "ada" },
      status: "ready",
      priority: 5,
      deduplicated: false,
    });
    expect(sent.id).toMatch(/^job_/);
    const dup = await ok("queue_send", { primitive: p, action: "send", queue: "emails", body: 1, dedupe_key: "k" });
    const again = await ok("queue_send", { primitive: p, queue: "emails", body: 2, dedupe_key: "k" });
    expect(again).toMatchObject({ id: dup.id, deduplicated: true });
    await ok("queue_send", { primitive: p, queue: "later", body: "x", delay: "1h" });

    const received = await ok("queue_receive", { primitive: p, queue: "emails", lease: "1m" });
    expect(received.data).toHaveLength(1);
    expect(received.data[0]).toMatchObject({ id: sent.id, status: "leased", attempts: 1 });
    expect(received.data[0].lease_token).toMatch(/^1\./);
    expect(received.data[0].lease_expires_at).toBe(1_800_000_000_000 + 60_000);
    const empty = await ok("queue_receive", { primitive: p, action: "receive", queue: "later", max: 10 });
    expect(empty.data).toEqual([]);

    const queues = await ok("queue_receive", { primitive: p, action: "queues" });
    expect(queues.data).toEqual([
      { name: "emails", ready: 1, delayed: 0, leased: 1, done: 0, dead: 0 },
      { name: "later", ready: 1, delayed: 1, leased: 0, done: 0, dead: 0 },
    ]);
    const list = await ok("queue_receive", { primitive: p, action: "list", queue: "emails" });
    expect(list.data.map((j: { id: string; status: string }) => [j.id, j.status])).toEqual([
      [sent.id, "leased"],
      [dup.id, "ready"],
    ]);
    const leased = await ok("queue_receive", { primitive: p, action: "list", queue: "emails", status: "ready" });
    expect(leased.data.map((j: { id: string }) => j.id)).toEqual([dup.id]);
    const got = await ok("queue_receive", { primitive: p, action: "get", queue: "emails", job: sent.id });
    expect(got).toMatchObject({ id: sent.id, status: "leased", body: { to: "ada" } });
    expect(got.lease_token).toBeUndefined(); // only the receiver gets the token
  });

  it("subscribe, publish to a subscribed queue, unsubscribe", async () => {
    const { s, client, ok } = await withStore("queue");
    const sub = await ok("queue_receive", { primitive: p, action: "subscribe", topic: "signups", queue: "welcome" });
    expect(sub).toMatchObject({ topic: "signups", queue: "welcome" });
    const published = await ok("queue_send", { primitive: p, action: "publish", topic: "signups", body: { user: 7 } });
    expect(published).toEqual({ delivered: 1 });
    const job = await ok("queue_receive", { primitive: p, queue: "welcome" });
    expect(job.data[0]).toMatchObject({ queue: "welcome", body: { user: 7 } });
    expect(
      await ok("queue_receive", { primitive: p, action: "unsubscribe", topic: "signups", queue: "welcome" }),
    ).toEqual({ result: null });
    expect(await ok("queue_send", { primitive: p, action: "publish", topic: "signups", body: 1 })).toEqual({
      delivered: 0,
    });
    const twice = await s.call(client, "queue_receive", {
      primitive: p,
      action: "unsubscribe",
      topic: "signups",
      queue: "welcome",
    });
    expect(twice).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
  });

  it("queue_ack acks, retries, fails, deads, heartbeats, requeues and purges", async () => {
    const { s, client, ok } = await withStore("queue");
    const q = "work";
    for (let i = 0; i < 4; i++) await ok("queue_send", { primitive: p, queue: q, body: i, max_attempts: 2 });
    const leased = (await ok("queue_receive", { primitive: p, queue: q, max: 4, lease: "30s" })).data as {
      id: string;
      lease_token: string;
      body: number;
    }[];
    expect(leased.map((j) => j.body)).toEqual([0, 1, 2, 3]);
    const [a, b, c, d] = leased as [(typeof leased)[0], (typeof leased)[0], (typeof leased)[0], (typeof leased)[0]];
    const settle = (job: typeof a, args: Record<string, unknown>) =>
      ok("queue_ack", { primitive: p, queue: q, job: job.id, lease_token: job.lease_token, ...args });

    const beat = await ok("queue_ack", {
      primitive: p,
      action: "heartbeat",
      queue: q,
      job: a.id,
      lease_token: a.lease_token,
      extend: "2m",
    });
    expect(beat).toMatchObject({ id: a.id, status: "leased", lease_expires_at: 1_800_000_000_000 + 120_000 });
    expect(await settle(a, {})).toMatchObject({ id: a.id, status: "done" });
    const retried = await settle(b, { action: "retry", in: "10s" });
    expect(retried).toMatchObject({ id: b.id, status: "ready", available_at: 1_800_000_000_000 + 10_000 });
    const failed = await settle(c, { action: "fail", error: "boom", in: 0 });
    expect(failed).toMatchObject({ id: c.id, status: "ready", last_error: "boom" });
    const dead = await settle(d, { action: "dead", error: "poison" });
    expect(dead).toMatchObject({ id: d.id, status: "dead", last_error: "poison" });
    const reused = await s.call(client, "queue_ack", { primitive: p, queue: q, job: a.id, lease_token: a.lease_token });
    expect(reused).toMatchObject({ isError: true, data: { error: { code: "conflict" } } });

    const requeued = await ok("queue_ack", { primitive: p, action: "requeue", queue: q, job: d.id });
    expect(requeued).toMatchObject({ id: d.id, status: "ready", attempts: 0 });
    // c fails again on its second attempt: dead now.
    const second = (await ok("queue_receive", { primitive: p, queue: q, max: 1 })).data[0];
    expect(second.id).toBe(c.id);
    expect(await settle(second, { action: "fail" })).toMatchObject({ status: "dead" });

    expect(await ok("queue_ack", { primitive: p, action: "purge", queue: q, status: "done" })).toEqual({ purged: 1 });
    expect(
      await ok("queue_ack", { primitive: p, action: "purge", queue: q, status: "dead", older_than: "1h" }),
    ).toEqual({ purged: 0 });
    expect(await ok("queue_ack", { primitive: p, action: "purge", queue: q, status: "dead" })).toEqual({ purged: 1 });
    const counts = await ok("queue_receive", { primitive: p, action: "queues" });
    expect(counts.data).toEqual([{ name: q, ready: 2, delayed: 1, leased: 0, done: 0, dead: 0 }]);
  });
});

forEachInvoker("MCP tools: queue batches", () => {
  it("send_batch, publish_batch and ack_batch answer each entry in order, a bad one with its own error", async () => {
    const { ok } = await withStore("queue");
    const sent = await ok("queue_send", {
      primitive: p,
      action: "send_batch",
      queue: "q",
      messages: [{ body: 1 }, { body: 2, priority: 9 }, { priority: 1 }, { body: 4, dedupe_key: "k" }],
    });
    expect(sent.data).toHaveLength(4);
    expect(sent.data[0]).toMatchObject({ queue: "q", status: "ready", deduplicated: false });
    expect(sent.data[0].body).toBeUndefined();
    expect(sent.data[1]).toMatchObject({ priority: 9 });
    expect(sent.data[2]).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(sent.data[3]).toMatchObject({ dedupe_key: "k", deduplicated: false });

    await ok("queue_receive", { primitive: p, action: "subscribe", topic: "t", queue: "sub" });
    const published = await ok("queue_send", {
      primitive: p,
      action: "publish_batch",
      topic: "t",
      messages: [{ body: "a" }, { body: "b" }],
    });
    expect(published.data).toEqual([{ delivered: 1 }, { delivered: 1 }]);

    const leased = (await ok("queue_receive", { primitive: p, queue: "q", max: 3 })).data;
    expect(leased.map((j: { body: unknown }) => j.body)).toEqual([2, 1, 4]);
    const [x, y] = leased;
    const acked = await ok("queue_ack", {
      primitive: p,
      action: "ack_batch",
      queue: "q",
      acks: [
        { job: x.id, lease_token: x.lease_token },
        { job: y.id, lease_token: y.lease_token, action: "dead", error: "poison" },
        { job: x.id, lease_token: x.lease_token },
      ],
    });
    expect(acked.data[0]).toMatchObject({ id: x.id, status: "done" });
    expect(acked.data[1]).toMatchObject({ id: y.id, status: "dead", last_error: "poison" });
    expect(acked.data[2]).toMatchObject({ status: 409, error: { code: "conflict" } });
  });

  it("refuses a batch of more than 100 entries as a whole", async () => {
    const { s, client } = await withStore("queue");
    const messages = Array.from({ length: 101 }, (_, i) => ({ body: i }));
    const res = await s.call(client, "queue_send", { primitive: p, action: "send_batch", queue: "q", messages });
    expect(res).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(JSON.stringify(res)).toContain("at most 100");
  });
});

forEachInvoker("MCP tools: memory", (mode) => {
  it("memory_remember stores; memory_recall recalls, lists and gets", async () => {
    const { s, client, ok } = await withStore("memory");
    const tea = await ok("memory_remember", {
      primitive: p,
      kind: "preference",
      text: "Ada prefers green tea in the morning",
      tags: ["drinks"],
      owner: "ada",
      metadata: { source: "chat" },
    });
    expect(tea).toMatchObject({
      kind: "preference",
      text: "Ada prefers green tea in the morning",
      tags: ["drinks"],
      owner: "ada",
      metadata: { source: "chat" },
      superseded_by: null,
      supersedes: [],
    });
    expect(tea.id).toMatch(/^mem_/);
    const deploy = await ok("memory_remember", { primitive: p, kind: "fact", text: "The service deploys on Fridays" });
    expect(deploy).toMatchObject({ kind: "fact", tags: [], owner: null, metadata: {} });

    const recalled = await ok("memory_recall", { primitive: p, query: "what tea does Ada drink" });
    expect(recalled.data[0]).toMatchObject({ id: tea.id, text: tea.text });
    expect(recalled.data[0].score).toBeGreaterThan(0);
    const typo = await ok("memory_recall", {
      primitive: p,
      action: "recall",
      query: "deplyos fridays",
      kinds: ["fact"],
    });
    expect(typo.data.map((m: { id: string }) => m.id)).toEqual([deploy.id]);
    const byOwner = await ok("memory_recall", { primitive: p, query: "tea", owner: "bob" });
    expect(byOwner.data).toEqual([]);

    const list = await ok("memory_recall", { primitive: p, action: "list" });
    expect(list.data.map((m: { id: string }) => m.id)).toEqual([deploy.id, tea.id]); // newest first
    const tagged = await ok("memory_recall", { primitive: p, action: "list", tag: "drinks", kind: "preference" });
    expect(tagged.data.map((m: { id: string }) => m.id)).toEqual([tea.id]);
    const paged = await ok("memory_recall", { primitive: p, action: "list", limit: 1 });
    expect(paged.data).toHaveLength(1);
    expect(typeof paged.next_cursor).toBe("string");
    expect(await ok("memory_recall", { primitive: p, action: "get", id: tea.id })).toEqual(tea);
    const missing = await s.call(client, "memory_recall", { primitive: p, action: "get", id: "mem_nope" });
    expect(missing).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
  });

  // The engine's clock is advanced below; in remote runs it lives in the engine process.
  it.skipIf(mode === "remote")("memory_forget supersedes, consolidates and forgets", async () => {
    const { s, client, ok } = await withStore("memory");
    const old = await ok("memory_remember", { primitive: p, kind: "fact", text: "The office is in Berlin" });
    const updated = await ok("memory_forget", {
      primitive: p,
      action: "supersede",
      id: old.id,
      text: "The office moved to Lisbon",
      tags: ["office"],
    });
    expect(updated).toMatchObject({
      text: "The office moved to Lisbon",
      kind: "fact",
      tags: ["office"],
      supersedes: [old.id],
    });
    expect((await ok("memory_recall", { primitive: p, action: "get", id: old.id })).superseded_by).toBe(updated.id);
    const recall = await ok("memory_recall", { primitive: p, query: "office" });
    expect(recall.data.map((m: { id: string }) => m.id)).toEqual([updated.id]);
    const withOld = await ok("memory_recall", { primitive: p, query: "office", include_superseded: true });
    expect(withOld.data.map((m: { id: string }) => m.id).sort()).toEqual([old.id, updated.id].sort());

    const first = await ok("memory_remember", { primitive: p, kind: "note", text: "buy milk and bread today" });
    s.clock.advance(1000);
    const second = await ok("memory_remember", { primitive: p, kind: "note", text: "buy milk and bread today!" });
    const merged = await ok("memory_forget", { primitive: p, action: "consolidate", threshold: 0.8 });
    expect(merged).toEqual({ merged: 1, superseded: [first.id] });
    expect((await ok("memory_recall", { primitive: p, action: "get", id: first.id })).superseded_by).toBe(second.id);

    expect(await ok("memory_forget", { primitive: p, action: "forget", id: second.id })).toEqual({
      id: second.id,
      deleted: true,
    });
    const gone = await s.call(client, "memory_recall", { primitive: p, action: "get", id: second.id });
    expect(gone).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
    const noAction = await s.call(client, "memory_forget", { primitive: p, id: old.id });
    expect(noAction).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
  });
});

inProcessOnly("MCP tools: memory versions", () => {
  it("memory_remember changes a memory by id (if_version); memory_recall reads its history and recalls as_of", async () => {
    const { s, client, ok } = await withStore("memory");
    const tea = await ok("memory_remember", { primitive: p, kind: "preference", text: "Ada drinks green tea" });
    expect(tea.version).toBe(1);
    const before = s.clock.now();
    s.clock.advance(1000);
    const coffee = await ok("memory_remember", {
      primitive: p,
      id: tea.id,
      kind: "preference",
      text: "Ada drinks black coffee",
      if_version: 1,
    });
    expect(coffee).toMatchObject({ id: tea.id, version: 2 });
    const stale = await s.call(client, "memory_remember", {
      primitive: p,
      id: tea.id,
      kind: "preference",
      text: "Ada drinks water",
      if_version: 1,
    });
    expect(stale).toMatchObject({ isError: true, data: { error: { code: "precondition_failed" } } });
    const history = await ok("memory_recall", { primitive: p, action: "history", id: tea.id });
    expect(history.data.map((v: { op: string; version: number }) => [v.op, v.version])).toEqual([
      ["update", 2],
      ["create", 1],
    ]);
    const now = await ok("memory_recall", { primitive: p, query: "what does Ada drink" });
    expect(now.data.map((m: { text: string }) => m.text)).toEqual(["Ada drinks black coffee"]);
    const then = await ok("memory_recall", { primitive: p, query: "green tea", as_of: before, min_score: 0.1 });
    expect(then.data.map((m: { text: string }) => m.text)).toEqual(["Ada drinks green tea"]);
  });
});
