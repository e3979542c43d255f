// Every primitive tool over Streamable HTTP (primitive_list, primitive_create, primitive_snapshot,
// primitive_fork), plus the audit trail every tool call leaves behind.
import { expect, it } from "vitest";
import { forEachInvoker, ok, startMcpServer } from "./helpers.js";

forEachInvoker("MCP tools: primitives", () => {
  it("primitive_create creates in the session's group and primitive_list lists, filters and pages", async () => {
    const s = await startMcpServer();
    const client = await s.connect("team");
    const kv = await ok(s, client, "primitive_create", { name: "cache", type: "kv" });
    expect(kv).toMatchObject({ name: "cache", type: "kv", group: "team", paused: false });
    expect(kv.id).toMatch(/^[0-9a-z]{26}$/);
    const db = await ok(s, client, "primitive_create", { name: "main", type: "db" });
    expect(db).toMatchObject({ name: "main", type: "db", group: "team" });

    const all = await ok(s, client, "primitive_list", {});
    expect(all.data.map((p: { name: string }) => p.name)).toEqual(["cache", "main"]);
    expect(all.data[0]).toMatchObject({ id: kv.id, type: "kv", group: "team" });
    expect(all.next_cursor).toBeNull();
    const onlyDb = await ok(s, client, "primitive_list", { type: "db" });
    expect(onlyDb.data.map((p: { id: string }) => p.id)).toEqual([db.id]);
    const page = await ok(s, client, "primitive_list", { limit: 1 });
    expect(page.data.map((p: { id: string }) => p.id)).toEqual([kv.id]);
    const rest = await ok(s, client, "primitive_list", { limit: 1, cursor: page.next_cursor });
    expect(rest.data.map((p: { id: string }) => p.id)).toEqual([db.id]);

    // Another group's session sees none of them.
    const other = await s.connect("elsewhere");
    expect((await ok(s, other, "primitive_list", {})).data).toEqual([]);
    const same = await s.call(client, "primitive_create", { name: "cache", type: "kv" });
    expect(same).toMatchObject({ isError: true, data: { error: { code: "already_exists" } } });
  });

  it("primitive_snapshot creates, lists and restores: the data really comes back", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const kv = await ok(s, client, "primitive_create", { name: "state", type: "kv" });
    await ok(s, client, "kv_set", { primitive: "state", key: "a", value: { v: 1 } });
    await ok(s, client, "kv_set", { primitive: "state", key: "b", value: "keep" });

    const snap = await ok(s, client, "primitive_snapshot", { primitive: "state", action: "create", name: "before" });
    expect(snap).toMatchObject({ name: "before", primitive: kv.id });
    expect(snap.id).toMatch(/^snap_/);
    const anonymous = await ok(s, client, "primitive_snapshot", { primitive: kv.id, action: "create" });
    expect(anonymous).toMatchObject({ name: null, primitive: kv.id });

    const listed = await ok(s, client, "primitive_snapshot", { primitive: "state", action: "list" });
    expect(listed.data.map((x: { id: string }) => x.id).sort()).toEqual([snap.id, anonymous.id].sort());
    const paged = await ok(s, client, "primitive_snapshot", { primitive: "state", action: "list", limit: 1 });
    expect(paged.data).toHaveLength(1);
    expect(typeof paged.next_cursor).toBe("string");

    // Change everything, then restore by label.
    await ok(s, client, "kv_set", { primitive: "state", key: "a", value: { v: 2 } });
    await ok(s, client, "kv_delete", { primitive: "state", key: "b" });
    await ok(s, client, "kv_set", { primitive: "state", key: "c", value: "new" });
    const restored = await ok(s, client, "primitive_snapshot", {
      primitive: "state",
      action: "restore",
      snapshot: "before",
    });
    expect(restored).toMatchObject({ id: snap.id, name: "before" });
    const after = await ok(s, client, "kv_get", { primitive: "state", keys: ["a", "b", "c"] });
    expect(after.data.map((e: { value: unknown } | null) => e?.value ?? null)).toEqual([{ v: 1 }, "keep", null]);
    const values = await ok(s, client, "kv_list", { primitive: "state", values: true });
    expect(values.data.map((e: { key: string; value: unknown }) => [e.key, e.value])).toEqual([
      ["a", { v: 1 }],
      ["b", "keep"],
    ]);
    // Restoring by id works too, and an unknown snapshot is not_found.
    await ok(s, client, "primitive_snapshot", { primitive: "state", action: "restore", snapshot: anonymous.id });
    const missing = await s.call(client, "primitive_snapshot", {
      primitive: "state",
      action: "restore",
      snapshot: "x",
    });
    expect(missing).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
    const noAction = await s.call(client, "primitive_snapshot", { primitive: "state" });
    expect(noAction).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(noAction.data.error.message).toContain("action");
  });

  it("primitive_fork copies live data or a snapshot into a new primitive of the group", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const src = await ok(s, client, "primitive_create", { name: "src", type: "kv" });
    await ok(s, client, "kv_set", { primitive: "src", key: "k", value: "old" });
    await ok(s, client, "primitive_snapshot", { primitive: "src", action: "create", name: "v1" });
    await ok(s, client, "kv_set", { primitive: "src", key: "k", value: "new" });

    const live = await ok(s, client, "primitive_fork", { primitive: "src", name: "copy" });
    expect(live).toMatchObject({ name: "copy", type: "kv", group: "g" });
    expect(live.forked_from).toMatchObject({ id: src.id, name: "src", snapshot: null });
    expect((await ok(s, client, "kv_get", { primitive: "copy", key: "k" })).value).toBe("new");

    const fromSnap = await ok(s, client, "primitive_fork", { primitive: src.id, snapshot: "v1" });
    expect(fromSnap.name).toMatch(/^src-fork-[a-z0-9]{6}$/);
    expect(fromSnap.forked_from.snapshot).toMatch(/^snap_/);
    expect((await ok(s, client, "kv_get", { primitive: fromSnap.id, key: "k" })).value).toBe("old");

    // The copy is independent of the original.
    await ok(s, client, "kv_set", { primitive: "copy", key: "k", value: "mine" });
    expect((await ok(s, client, "kv_get", { primitive: "src", key: "k" })).value).toBe("new");
    const names = (await ok(s, client, "primitive_list", {})).data.map((p: { name: string }) => p.name);
    expect(names).toEqual(["src", "copy", fromSnap.name]);
  });

  it("resolves `primitive` by id or name, refuses an ambiguous name and another type", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const kv = await ok(s, client, "primitive_create", { name: "shared", type: "kv" });
    await ok(s, client, "primitive_create", { name: "shared", type: "storage" });
    // kv tools look only at kv primitives, so the name is unambiguous for them.
    await ok(s, client, "kv_set", { primitive: "shared", key: "x", value: 1 });
    // Tools of any type cannot tell which one is meant.
    const ambiguous = await s.call(client, "primitive_snapshot", { primitive: "shared", action: "create" });
    expect(ambiguous).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(ambiguous.data.error.message).toMatch(/kv, storage|storage, kv/);
    await ok(s, client, "primitive_snapshot", { primitive: kv.id, action: "create" });
    // An id of another type is wrong_type; an id of another group is not found.
    const wrong = await s.call(client, "storage_list", { primitive: kv.id });
    expect(wrong).toMatchObject({ isError: true, data: { error: { code: "wrong_type" } } });
    const other = await s.connect("other");
    const foreign = await s.call(other, "kv_get", { primitive: kv.id, key: "x" });
    expect(foreign).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
  });

  it("audits every tool call with actor local, failed calls too", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    await ok(s, client, "primitive_create", { name: "k", type: "kv" });
    await ok(s, client, "primitive_create", { name: "d", type: "db" });
    await ok(s, client, "kv_set", { primitive: "k", key: "secret-ish", value: "do-not-log" });
    await ok(s, client, "kv_get", { primitive: "k", key: "secret-ish" });
    await ok(s, client, "db_exec", { primitive: "d", sql: "CREATE TABLE t (x)" });
    await ok(s, client, "db_query", { primitive: "d", sql: "SELECT * FROM t" });
    await ok(s, client, "primitive_snapshot", { primitive: "k", action: "create", name: "s1" });
    expect((await s.call(client, "kv_get", { primitive: "k", key: "absent" })).isError).toBe(true);

    const entries = await s.audit();
    const actions = entries.map((e) => e.action);
    for (const action of ["primitive.create", "kv.set", "kv.get", "db.query", "primitive.snapshot"]) {
      expect(actions, action).toContain(action);
    }
    for (const e of entries) expect(e.actor).toBe("local");
    const set = entries.find((e) => e.action === "kv.set");
    expect(set?.target).toBe("secret-ish");
    const failed = entries.filter((e) => e.action === "kv.get" && e.target === "absent");
    expect(failed).toHaveLength(1);
    expect(JSON.stringify(failed[0]?.detail)).toContain("not_found");
    // Values never reach the trail.
    expect(JSON.stringify(entries)).not.toContain("do-not-log");
  });
});
