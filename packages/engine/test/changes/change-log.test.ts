// Change logs (primitives/changes/): every committed change of every type appears exactly once,
// in commit order, without values; failed writes appear nowhere; cursors resume, are checked,
// and answer 409 naming the oldest cursor held once past the retention window or a restore.
import { Readable } from "node:stream";
import { type ChangeEntry, type ChangePage, LOCAL_PRINCIPAL, type PrimitiveInfo, ServiceError } from "@prim/wire";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import { schemaDifference } from "../../src/sql-host/file-check.js";
import { testEngine } from "../helpers.js";

const body = (text: string) => Readable.from([Buffer.from(text)]);

function api(engine: Engine) {
  const invoke = <T = unknown>(op: string, target: string | null, input: unknown) =>
    engine.invoke<T>(LOCAL_PRINCIPAL, op, target, input);
  const create = (name: string, type: string) =>
    invoke<PrimitiveInfo>("primitive.create", null, { name, type, group: "g" });
  const changes = (id: string, input: Record<string, unknown> = {}) => invoke<ChangePage>("changes.read", id, input);
  const ops = (page: ChangePage) =>
    page.data.map((e) => [e.op, e.key ?? e.path ?? e.id ?? e.name ?? e.queue ?? e.table, e.version ?? null]);
  return { invoke, create, changes, ops };
}

async function refusal(run: Promise<unknown>): Promise<ServiceError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  return err as ServiceError;
}

describe("change log", () => {
  it("records every type's changes exactly once, in order, with no values, and nothing of a failed write", async () => {
    const { engine, clock } = testEngine();
    const { invoke, create, changes, ops } = api(engine);
    await invoke("group.create", null, { name: "g" });

    const kv = await create("cache", "kv");
    await invoke("kv.set", kv.id, { key: "a", value: { secret: "not-in-feed" } });
    await invoke("kv.set", kv.id, { key: "a", value: 2 });
    await refusal(invoke("kv.set", kv.id, { key: "a", value: 3, if_version: 7 })); // 412: nothing written
    await invoke("kv.set", kv.id, { key: "t", value: 1, ttl: "1s" });
    await invoke("kv.delete", kv.id, { key: "a" });
    clock.advance(2_000);
    const kvPage = await changes(kv.id);
    expect(ops(kvPage)).toEqual([
      ["set", "a", 1],
      ["set", "a", 2],
      ["set", "t", 1],
      ["delete", "a", 2],
      ["expire", "t", 1], // removed by the read, when it is due
    ]);
    expect(JSON.stringify(kvPage)).not.toContain("not-in-feed");
    expect(kvPage.data[0]).toMatchObject({ primitive: kv.id, type: "kv", seq: 1, size: 24 });

    const fs = await create("files", "fs");
    await invoke("fs.write", fs.id, { path: "/a/b.txt", body: body("hello") });
    await refusal(invoke("fs.write", fs.id, { path: "/a", body: body("x") })); // a directory is there
    await invoke("fs.move", fs.id, { from: "/a/b.txt", to: "/c.txt" });
    await invoke("fs.delete", fs.id, { path: "/c.txt" });
    const fsPage = await changes(fs.id);
    expect(ops(fsPage)).toEqual([
      ["write", "/a/b.txt", null],
      ["rename", "/a/b.txt", null],
      ["delete", "/c.txt", null],
    ]);
    expect(fsPage.data[1]?.detail).toEqual({ to: "/c.txt" });

    const st = await create("bucket", "storage");
    await invoke("storage.put", st.id, { key: "o", body: body("12345") });
    await refusal(invoke("storage.put", st.id, { key: "o", body: body("x"), if_none_match: "*" }));
    await invoke("storage.delete", st.id, { key: "o" });
    expect(ops(await changes(st.id))).toEqual([
      ["put", "o", null],
      ["delete", "o", null],
    ]);

    const q = await create("jobs", "queue");
    const sent = await invoke<{ id: string }>("queue.send", q.id, { queue: "q", body: { x: 1 }, max_attempts: 1 });
    const [job] = (await invoke<{ data: { id: string; lease_token: string }[] }>("queue.receive", q.id, { queue: "q" }))
      .data;
    await refusal(invoke("queue.ack", q.id, { queue: "q", job: sent.id, lease_token: "1.wrong" }));
    await invoke("queue.ack", q.id, { queue: "q", job: sent.id, lease_token: job?.lease_token });
    const second = await invoke<{ id: string }>("queue.send", q.id, { queue: "q", body: 2, max_attempts: 1 });
    await invoke("queue.receive", q.id, { queue: "q", lease: "1s" });
    clock.advance(2_000); // the lease runs out on its only attempt: dead (seen by the read)
    expect(ops(await changes(q.id))).toEqual([
      ["send", sent.id, null],
      ["ack", sent.id, null],
      ["send", second.id, null],
      ["dead", second.id, null],
    ]);

    const mem = await create("notes", "memory");
    const m1 = await invoke<{ id: string }>("memory.remember", mem.id, { kind: "fact", text: "the sky is green" });
    const m2 = await invoke<{ id: string }>("memory.supersede", mem.id, { id: m1.id, text: "the sky is blue" });
    await invoke("memory.forget", mem.id, { id: m2.id });
    expect(ops(await changes(mem.id))).toEqual([
      ["remember", m1.id, 1],
      ["remember", m2.id, 1],
      ["supersede", m1.id, 2],
      ["forget", m2.id, 2],
    ]);

    const vault = await create("keys", "vault");
    await invoke("vault.put", vault.id, { name: "API_TOKEN", value: "s3cr3t-value" });
    await invoke("vault.put", vault.id, { name: "API_TOKEN", value: "s3cr3t-value-2" });
    await invoke("vault.delete", vault.id, { name: "API_TOKEN" });
    const vaultPage = await changes(vault.id);
    expect(ops(vaultPage)).toEqual([
      ["set", "API_TOKEN", 1],
      ["rotate", "API_TOKEN", 2],
      ["delete", "API_TOKEN", null],
    ]);
    expect(JSON.stringify(vaultPage)).not.toContain("s3cr3t");
  });

  it("resumes from a cursor, refuses garbage and other primitives' cursors, and wakes a long poll on a commit", async () => {
    const { engine } = testEngine();
    const { invoke, create, changes } = api(engine);
    await invoke("group.create", null, { name: "g" });
    const kv = await create("cache", "kv");
    const other = await create("other", "kv");
    for (const key of ["a", "b", "c"]) await invoke("kv.set", kv.id, { key, value: 1 });
    await invoke("kv.set", other.id, { key: "z", value: 1 });
    const first = await changes(kv.id, { limit: 2 });
    expect(first.data.map((e) => e.key)).toEqual(["a", "b"]);
    const rest = await changes(kv.id, { after: first.cursor });
    expect(rest.data.map((e) => e.key)).toEqual(["c"]);
    expect((await changes(kv.id, { after: first.data[0]?.cursor })).data.map((e) => e.key)).toEqual(["b", "c"]);

    for (const after of ["garbage", `${rest.cursor}x`, "MS41.AAAAAAAAAAAAAAAA"]) {
      expect((await refusal(changes(kv.id, { after }))).code).toBe("invalid_request");
    }
    const foreign = (await changes(other.id)).cursor;
    const err = await refusal(changes(kv.id, { after: foreign }));
    expect(err.code).toBe("invalid_request");
    expect(err.message).not.toContain(other.id);

    const parked = changes(kv.id, { after: rest.cursor, wait: "20s" });
    while (engine.services.files.changeSignals.waiting === 0) await new Promise((r) => setImmediate(r));
    await invoke("kv.set", kv.id, { key: "d", value: 1 });
    expect((await parked).data.map((e) => e.key)).toEqual(["d"]);
  });

  it("answers 409 naming the oldest cursor held past the retention window and after a restore", async () => {
    const { engine } = testEngine({ changeLog: { maxEntries: 3 } });
    const { invoke, create, changes } = api(engine);
    await invoke("group.create", null, { name: "g" });
    const kv = await create("cache", "kv");
    await invoke("kv.set", kv.id, { key: "k0", value: 0 });
    const early = (await changes(kv.id)).cursor;
    const snap = await invoke<{ id: string }>("primitive.snapshot", kv.id, {});
    for (let i = 1; i <= 12_000; i++) await invoke("kv.set", kv.id, { key: `k${i % 5}`, value: i });
    const err = await refusal(changes(kv.id, { after: early }));
    expect(err.code).toBe("conflict");
    const held = /oldest cursor still held is '([^']+)'/.exec(err.message)?.[1] as string;
    const resumed = await changes(kv.id, { after: held });
    expect(resumed.data.length).toBeGreaterThan(0);
    expect(resumed.data.length).toBeLessThanOrEqual(3 + 10_000);

    await invoke("primitive.restore", kv.id, { snapshot: snap.id });
    const afterRestore = await refusal(changes(kv.id, { after: resumed.cursor }));
    expect(afterRestore.code).toBe("conflict");
    expect(afterRestore.message).toContain("restored");
    const fresh = await changes(kv.id);
    expect(fresh.data.map((e: ChangeEntry) => e.key)).toEqual(["k0"]);
  });

  it("gives a file made before change logs its tables on open, losing nothing", async () => {
    const { engine, dataDir } = testEngine();
    const { invoke, create } = api(engine);
    await invoke("group.create", null, { name: "g" });
    const kv = await create("cache", "kv");
    await invoke("kv.set", kv.id, { key: "kept", value: 42 });
    await engine.close();
    const db = new Database(`${dataDir}/primitives/${kv.id}.sqlite`);
    db.exec("DROP TABLE prim_changes; DROP TABLE prim_changes_state;");
    db.close();
    const again = testEngine({ dataDir });
    const b = api(again.engine);
    expect(await b.invoke("kv.get", kv.id, { key: "kept" })).toMatchObject({ value: 42 });
    await b.invoke("kv.set", kv.id, { key: "new", value: 1 });
    expect(b.ops(await b.changes(kv.id))).toEqual([["set", "new", 1]]);
  });

  it("lets an archived file from before change logs pass the import check, and nothing else missing", () => {
    const { engine } = testEngine();
    const fresh = engine.services.files.freshSchema("kv") ?? [];
    expect(fresh.some((row) => row.name === "prim_changes")).toBe(true);
    const older = fresh.filter((row) => !row.tbl_name.startsWith("prim_changes"));
    expect(schemaDifference(older, fresh)).toBeNull();
    const noKv = fresh.filter((row) => row.name !== "kv");
    expect(schemaDifference(noKv, fresh)).toBe("lacks table 'kv'");
  });
});
