// db_query, db_exec, db_branch and fs_read, fs_write, fs_search, fs_fork over Streamable HTTP:
// every action, with the structured result checked.
import { expect, it } from "vitest";
import { forEachInvoker, withStore } from "./helpers.js";

/** The MCP tools' inline content limit, stated here so a change to it fails this test: 1 MiB. */
const MAX_INLINE_BYTES = 1_048_576;

forEachInvoker("MCP tools: db", () => {
  it("db_exec runs one statement or a batch; db_query queries, lists tables and describes one", async () => {
    const { s, client, ok } = await withStore("db");
    const created = await ok("db_exec", {
      primitive: "store",
      sql: "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, avatar BLOB)",
    });
    expect(created).toMatchObject({ rows: [], rows_affected: 0 });
    const insert = await ok("db_exec", {
      primitive: "store",
      sql: "INSERT INTO users (name, avatar) VALUES (?, ?)",
      params: ["ada", { base64: Buffer.from([1, 2, 3]).toString("base64") }],
    });
    expect(insert).toMatchObject({ rows_affected: 1, last_insert_rowid: 1 });
    const batch = await ok("db_exec", {
      primitive: "store",
      statements: [
        { sql: "INSERT INTO users (name) VALUES (:n)", params: { n: "bob" } },
        { sql: "INSERT INTO users (name) VALUES ('cy')" },
        { sql: "CREATE VIEW names AS SELECT name FROM users" },
      ],
    });
    expect(batch.results).toHaveLength(3);
    expect(batch.results[0]).toMatchObject({ rows_affected: 1, last_insert_rowid: 2 });
    // A failing statement rolls the whole batch back and names its index.
    const failed = await s.call(client, "db_exec", {
      primitive: "store",
      statements: [
        { sql: "INSERT INTO users (name) VALUES ('dee')" },
        { sql: "INSERT INTO users (name) VALUES (NULL)" },
      ],
    });
    expect(failed.isError).toBe(true);
    expect(failed.data.error.message).toContain("statements[1]");
    const typo = await s.call(client, "db_exec", {
      primitive: "store",
      statements: [{ sql: "DELETE FROM users", parms: [] }],
    });
    expect(typo).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(typo.data.error.message).toContain("parms");

    const query = await ok("db_query", {
      primitive: "store",
      action: "query",
      sql: "SELECT id, name, avatar FROM users ORDER BY id",
    });
    expect(query.columns).toEqual(["id", "name", "avatar"]);
    expect(query.rows).toEqual([
      { id: 1, name: "ada", avatar: Buffer.from([1, 2, 3]).toString("base64") },
      { id: 2, name: "bob", avatar: null },
      { id: 3, name: "cy", avatar: null },
    ]);
    expect(query.truncated).toBe(false);
    const tables = await ok("db_query", { primitive: "store", action: "tables" });
    expect(tables.data).toEqual([
      { name: "names", type: "view" },
      { name: "users", type: "table" },
    ]);
    const table = await ok("db_query", { primitive: "store", action: "table", table: "users" });
    expect(table).toMatchObject({ name: "users", type: "table" });
    expect(table.sql).toContain("CREATE TABLE users");
    expect(table.columns.map((c: { name: string }) => c.name)).toEqual(["id", "name", "avatar"]);
    expect(table.columns[1]).toMatchObject({ name: "name", type: "TEXT", notnull: true });
  });

  it("db_branch creates, lists, promotes and deletes branches; queries run on a branch", async () => {
    const { s, client, ok } = await withStore("db");
    await ok("db_exec", { primitive: "store", sql: "CREATE TABLE t (v TEXT)" });
    await ok("db_exec", { primitive: "store", sql: "INSERT INTO t VALUES ('main')" });
    const branch = await ok("db_branch", { primitive: "store", action: "create", name: "trial" });
    expect(branch).toMatchObject({ name: "trial", main_changed: false });
    await ok("db_branch", { primitive: "store", action: "create", name: "scratch" });
    const listed = await ok("db_branch", { primitive: "store", action: "list" });
    expect(listed.data.map((b: { name: string }) => b.name).sort()).toEqual(["scratch", "trial"]);

    await ok("db_exec", { primitive: "store", branch: "trial", sql: "INSERT INTO t VALUES ('branch')" });
    const onBranch = await ok("db_query", { primitive: "store", branch: "trial", sql: "SELECT v FROM t ORDER BY v" });
    expect(onBranch.rows).toEqual([{ v: "branch" }, { v: "main" }]);
    const onMain = await ok("db_query", { primitive: "store", sql: "SELECT v FROM t" });
    expect(onMain.rows).toEqual([{ v: "main" }]);

    expect(await ok("db_branch", { primitive: "store", action: "promote", name: "trial" })).toEqual({
      promoted: "trial",
    });
    const promoted = await ok("db_query", { primitive: "store", sql: "SELECT v FROM t ORDER BY v" });
    expect(promoted.rows).toEqual([{ v: "branch" }, { v: "main" }]);
    expect(await ok("db_branch", { primitive: "store", action: "delete", name: "scratch" })).toEqual({
      deleted: "scratch",
    });
    expect((await ok("db_branch", { primitive: "store", action: "list" })).data).toEqual([]);
    const gone = await s.call(client, "db_branch", { primitive: "store", action: "delete", name: "scratch" });
    expect(gone).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
  });
});

forEachInvoker("MCP tools: fs", () => {
  it("fs_write writes utf8 and base64; fs_read returns content, a listing or a stat", async () => {
    const { s, client, ok } = await withStore("fs");
    const written = await ok("fs_write", { primitive: "store", path: "/src/app.ts", content: "export const a = 1;\n" });
    expect(written).toMatchObject({ path: "/src/app.ts", name: "app.ts", type: "file", size: 20, mode: "644" });
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    const img = await ok("fs_write", {
      primitive: "store",
      action: "write",
      path: "/img/logo.png",
      content: binary.toString("base64"),
      encoding: "base64",
      mode: "600",
    });
    expect(img).toMatchObject({ path: "/img/logo.png", size: 6, mode: "600" });

    const file = await ok("fs_read", { primitive: "store", path: "/src/app.ts" });
    expect(file).toMatchObject({ path: "/src/app.ts", type: "file", size: 20, etag: written.etag });
    expect(file.content).toEqual({ text: "export const a = 1;\n" });
    expect(file.content_type).toMatch(/typescript|text/);
    const png = await ok("fs_read", { primitive: "store", path: "/img/logo.png" });
    expect(png.content).toEqual({ base64: binary.toString("base64") });
    expect(png.content_type).toBe("image/png");

    const root = await ok("fs_read", { primitive: "store" });
    expect(root.data.map((e: { path: string; type: string }) => [e.path, e.type])).toEqual([
      ["/img", "dir"],
      ["/src", "dir"],
    ]);
    expect(root.truncated).toBe(false);
    const tree = await ok("fs_read", { primitive: "store", path: "/", recursive: true });
    expect(tree.data.map((e: { path: string }) => e.path).sort()).toEqual([
      "/img",
      "/img/logo.png",
      "/src",
      "/src/app.ts",
    ]);
    const listFile = await ok("fs_read", { primitive: "store", path: "/src/app.ts", list: true });
    expect(listFile.data.map((e: { path: string }) => e.path)).toEqual(["/src/app.ts"]);
    const stat = await ok("fs_read", { primitive: "store", path: "/src/app.ts", stat: true });
    expect(stat).toEqual(written);
    const missing = await s.call(client, "fs_read", { primitive: "store", path: "/nope" });
    expect(missing).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
  });

  it("fs_read of a file over 1 MiB is payload_too_large; its stat still works", async () => {
    const { s, client, ok } = await withStore("fs");
    const big = Buffer.alloc(MAX_INLINE_BYTES + 1, 0x62);
    await ok("fs_write", { primitive: "store", path: "/big.txt", content: big.toString("base64"), encoding: "base64" });
    const res = await s.call(client, "fs_read", { primitive: "store", path: "/big.txt" });
    expect(res).toMatchObject({ isError: true, data: { error: { code: "payload_too_large" } } });
    expect(res.data.error.message).toContain(String(MAX_INLINE_BYTES + 1));
    expect((await ok("fs_read", { primitive: "store", path: "/big.txt", stat: true })).size).toBe(MAX_INLINE_BYTES + 1);
  });

  it("fs_write makes directories, moves and deletes", async () => {
    const { s, client, ok } = await withStore("fs");
    const dir = await ok("fs_write", { primitive: "store", action: "mkdir", path: "/a/b/c" });
    expect(dir).toMatchObject({ path: "/a/b/c", type: "dir", size: 0, etag: null });
    await ok("fs_write", { primitive: "store", path: "/a/b/c/file.txt", content: "one" });
    const moved = await ok("fs_write", { primitive: "store", action: "move", from: "/a/b/c/file.txt", to: "/a/f.txt" });
    expect(moved).toMatchObject({ path: "/a/f.txt", name: "f.txt", type: "file", size: 3 });
    expect((await ok("fs_read", { primitive: "store", path: "/a/f.txt" })).content.text).toBe("one");
    await ok("fs_write", { primitive: "store", path: "/a/g.txt", content: "two" });
    const clash = await s.call(client, "fs_write", {
      primitive: "store",
      action: "move",
      from: "/a/g.txt",
      to: "/a/f.txt",
    });
    expect(clash).toMatchObject({ isError: true, data: { error: { code: "fs_conflict" } } });
    await ok("fs_write", { primitive: "store", action: "move", from: "/a/g.txt", to: "/a/f.txt", overwrite: true });
    expect((await ok("fs_read", { primitive: "store", path: "/a/f.txt" })).content.text).toBe("two");

    await ok("fs_write", { primitive: "store", action: "delete", path: "/a/f.txt" });
    expect((await s.call(client, "fs_read", { primitive: "store", path: "/a/f.txt" })).isError).toBe(true);
    const nonEmpty = await s.call(client, "fs_write", { primitive: "store", action: "delete", path: "/a" });
    expect(nonEmpty.isError).toBe(true);
    await ok("fs_write", { primitive: "store", action: "delete", path: "/a", recursive: true });
    expect((await ok("fs_read", { primitive: "store", path: "/" })).data).toEqual([]);
  });

  it("fs_search searches text and globs paths; fs_fork copies a tree", async () => {
    const { ok } = await withStore("fs");
    await ok("fs_write", { primitive: "store", path: "/docs/intro.md", content: "Prim stores data for agents" });
    await ok("fs_write", { primitive: "store", path: "/docs/guide.md", content: "how to deploy the service" });
    await ok("fs_write", { primitive: "store", path: "/src/main.ts", content: "// agents start here" });

    const hits = await ok("fs_search", { primitive: "store", q: "agents" });
    expect(hits.data.map((h: { path: string }) => h.path).sort()).toEqual(["/docs/intro.md", "/src/main.ts"]);
    expect(hits.data[0].snippet).toMatch(/agents/);
    const under = await ok("fs_search", { primitive: "store", action: "search", q: "agent*", path: "/docs" });
    expect(under.data.map((h: { path: string }) => h.path)).toEqual(["/docs/intro.md"]);
    const glob = await ok("fs_search", { primitive: "store", action: "glob", pattern: "**/*.md" });
    expect([...glob.data].sort()).toEqual(["/docs/guide.md", "/docs/intro.md"]);
    const one = await ok("fs_search", { primitive: "store", action: "glob", pattern: "**/*", limit: 1 });
    expect(one.data).toHaveLength(1);

    const fork = await ok("fs_fork", { primitive: "store", from: "/docs", to: "/docs-copy" });
    expect(fork).toEqual({ path: "/docs-copy", files: 2 });
    expect((await ok("fs_read", { primitive: "store", path: "/docs-copy/guide.md" })).content.text).toBe(
      "how to deploy the service",
    );
    const named = await ok("fs_fork", { primitive: "store", from: "/src" });
    expect(named.path).toMatch(/^\/src-fork-[a-z0-9]{6}$/);
    expect(named.files).toBe(1);
  });
});
