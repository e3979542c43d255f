// MCP resources through the official SDK client: fs files, storage objects and db schemas of
// the session's group — list (paged), read (text and blob), templates, subscriptions with
// `notifications/resources/updated`, resource links in tool results — with the credential's
// tools and group honoured as tool calls honour them.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError, type Resource, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { expect, it } from "vitest";
import { forEachInvoker, ok, startMcpServer } from "./helpers.js";

type Server = Awaited<ReturnType<typeof startMcpServer>>;

/** Every page of resources/list, and how many pages it took. */
async function listAll(client: Client): Promise<{ resources: Resource[]; pages: number }> {
  const resources: Resource[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    expect(page.resources.length).toBeLessThanOrEqual(100);
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { resources, pages };
}

/** The JSON-RPC error a request fails with. */
async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

async function expectNotFound(client: Client, uri: string) {
  const err = await rpcError(client.readResource({ uri }));
  expect(err.code, uri).toBe(-32002);
  expect(err.data).toMatchObject({ code: "not_found" });
}

/** Group `g` with fs `files`, storage `bucket` and db `main`; answers their ids. */
async function seed(s: Server, client: Client) {
  const create = async (name: string, type: string) =>
    (await ok(s, client as never, "primitive_create", { name, type })).id as string;
  return {
    fs: await create("files", "fs"),
    storage: await create("bucket", "storage"),
    db: await create("main", "db"),
  };
}

/** Notices arriving for a client, and a way to wait for the next one of a URI. */
function updates(client: Client) {
  const seen: string[] = [];
  const waiters: { uri: string; resolve: () => void }[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.push(n.params.uri);
    for (const w of waiters.splice(0)) {
      if (w.uri === n.params.uri) w.resolve();
      else waiters.push(w);
    }
  });
  const next = (uri: string) => new Promise<void>((resolve) => waiters.push({ uri, resolve }));
  return { seen, next };
}

/**
 * Writes until the first notice of `uri` arrives: the server can send notices only once the
 * client's event stream (its GET, opened after initialize) is up, which the client does not
 * announce. From then on every notice of the session arrives, in order.
 */
async function untilNotified(u: ReturnType<typeof updates>, uri: string, write: () => Promise<unknown>) {
  for (let attempt = 0; ; attempt++) {
    const arrived = u.next(uri);
    await write();
    const done = await Promise.race([arrived.then(() => true), new Promise((r) => setTimeout(() => r(false), 200))]);
    if (done) return;
    if (attempt === 50) throw new Error(`no notification for ${uri}`);
  }
}

forEachInvoker("MCP resources", (mode) => {
  it("lists every file, object and db schema of the group across pages with an opaque cursor", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const ids = await seed(s, client);
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 230; i++) {
      const path = `/dir${i % 3}/f${String(i).padStart(3, "0")}.txt`;
      writes.push(ok(s, client, "fs_write", { primitive: "files", path, content: `file ${i}` }));
    }
    for (let i = 0; i < 120; i++) {
      writes.push(ok(s, client, "storage_write", { primitive: "bucket", key: `k/${i}`, content: `${i}` }));
    }
    await Promise.all(writes);
    await ok(s, client, "fs_write", { primitive: "files", action: "mkdir", path: "/empty" });

    const { resources, pages } = await listAll(client);
    expect(pages).toBeGreaterThanOrEqual(4);
    expect(resources).toHaveLength(230 + 120 + 1);
    expect(new Set(resources.map((r) => r.uri)).size).toBe(resources.length);
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: `prim://${ids.fs}/dir0/f000.txt`, name: "/dir0/f000.txt", size: 6 }),
    );
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: `prim://${ids.storage}/k/7`, name: "k/7", mimeType: "application/octet-stream" }),
    );
    expect(resources).toContainEqual(
      expect.objectContaining({ uri: `prim://${ids.db}/schema`, mimeType: "application/json" }),
    );
    // Directories are not resources.
    expect(resources.some((r) => r.uri.endsWith("/empty"))).toBe(false);

    const bad = await rpcError(client.listResources({ cursor: "not-a-cursor" }));
    expect(bad.code).toBe(-32602);
    expect(bad.data).toMatchObject({ code: "invalid_request" });
  }, 60_000);

  it("pages across many primitives of a type (each resumed by its own listing cursor)", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const ids: string[] = [];
    for (let i = 0; i < 52; i++) {
      const name = `bucket-${String(i).padStart(2, "0")}`;
      ids.push((await ok(s, client, "primitive_create", { name, type: "storage" })).id);
      await ok(s, client, "storage_write", { primitive: name, key: "o", content: `${i}` });
    }
    const { resources, pages } = await listAll(client);
    expect(pages).toBeGreaterThanOrEqual(2); // a page visits at most 50 primitives
    expect(resources.map((r) => r.uri)).toEqual(ids.map((id) => `prim://${id}/o`));
  }, 60_000);

  it("reads text as text and bytes as a blob, by id or name, capped at 1 MiB", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const ids = await seed(s, client);
    await ok(s, client, "fs_write", { primitive: "files", path: "/docs/a.md", content: "# héllo\n" });
    const bytes = Buffer.from([0, 1, 2, 255, 254, 128]);
    await ok(s, client, "fs_write", {
      primitive: "files",
      path: "/img.png",
      content: bytes.toString("base64"),
      encoding: "base64",
    });
    await ok(s, client, "storage_write", {
      primitive: "bucket",
      key: "conf/app.json",
      content: '{"a":1}',
      content_type: "application/json",
    });
    await ok(s, client, "storage_write", {
      primitive: "bucket",
      key: "raw",
      content: bytes.toString("base64"),
      encoding: "base64",
    });

    const md = await client.readResource({ uri: `prim://${ids.fs}/docs/a.md` });
    expect(md.contents).toEqual([
      { uri: `prim://${ids.fs}/docs/a.md`, mimeType: "text/markdown; charset=utf-8", text: "# héllo\n" },
    ]);
    // Names are percent-encoded segment by segment.
    await ok(s, client, "fs_write", { primitive: "files", path: "/docs/é ü#1.txt", content: "encoded" });
    const encoded = `prim://${ids.fs}/docs/%C3%A9%20%C3%BC%231.txt`;
    expect((await listAll(client)).resources.map((r) => r.uri)).toContain(encoded);
    expect((await client.readResource({ uri: encoded })).contents[0]).toMatchObject({ text: "encoded" });
    const byName = await client.readResource({ uri: "prim://files/docs/a.md" });
    expect(byName.contents[0]).toMatchObject({ text: "# héllo\n" });
    const png = await client.readResource({ uri: `prim://${ids.fs}/img.png` });
    expect(png.contents[0]).toMatchObject({ mimeType: "image/png", blob: bytes.toString("base64") });
    expect(png.contents[0]).not.toHaveProperty("text");
    const json = await client.readResource({ uri: `prim://${ids.storage}/conf/app.json` });
    expect(json.contents[0]).toMatchObject({ mimeType: "application/json", text: '{"a":1}' });
    const raw = await client.readResource({ uri: `prim://${ids.storage}/raw` });
    expect(raw.contents[0]).toMatchObject({ mimeType: "application/octet-stream", blob: bytes.toString("base64") });

    // Past MAX_INLINE_BYTES: a clear refusal naming the size, the way out too.
    const big = Buffer.alloc(1024 * 1024 + 1, 97).toString("base64");
    await ok(s, client, "storage_write", { primitive: "bucket", key: "big", content: big, encoding: "base64" });
    const tooLarge = await rpcError(client.readResource({ uri: `prim://${ids.storage}/big` }));
    expect(tooLarge.data).toMatchObject({ code: "payload_too_large" });
    expect(tooLarge.message).toMatch(/1048577 bytes.*storage_sign/);

    // A directory, a missing file, an unknown primitive: not found.
    await expectNotFound(client, `prim://${ids.fs}/docs`);
    await expectNotFound(client, `prim://${ids.fs}/docs/missing.md`);
    await expectNotFound(client, "prim://nothing-here/a.txt");
    await expectNotFound(client, "file:///etc/passwd");

    // Each read is audited like the tool call would be.
    const audit = await s.audit();
    expect(audit).toContainEqual(
      expect.objectContaining({ action: "fs.read", target: "/docs/a.md", actor: "local", primitive_id: ids.fs }),
    );
  });

  it("serves resource templates and a db's schema as JSON", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const ids = await seed(s, client);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "prim://{primitive}/{+path}",
      "prim://{primitive}/schema",
    ]);

    await ok(s, client, "db_exec", {
      primitive: "main",
      sql: "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
    });
    const schema = await client.readResource({ uri: "prim://main/schema" });
    expect(schema.contents[0]?.mimeType).toBe("application/json");
    const parsed = JSON.parse((schema.contents[0] as { text: string }).text);
    expect(parsed.tables).toEqual([
      expect.objectContaining({
        name: "users",
        type: "table",
        columns: [
          expect.objectContaining({ name: "id", type: "INTEGER", pk: 1 }),
          expect.objectContaining({ name: "name", type: "TEXT", notnull: true }),
        ],
      }),
    ]);
    await expectNotFound(client, `prim://${ids.db}/users`);
  });

  it("lists and reads only with the type's read tool, as tools do", async () => {
    const s = await startMcpServer();
    const full = await s.connect("g");
    const ids = await seed(s, full);
    await ok(s, full, "fs_write", { primitive: "files", path: "/secret.txt", content: "s3cret" });
    await ok(s, full, "storage_write", { primitive: "bucket", key: "obj", content: "x" });
    const uri = `prim://${ids.fs}/secret.txt`;

    const writer = await s.connect("g", "?tools=fs_write,storage_*,primitive_list");
    const listed = (await listAll(writer)).resources.map((r) => r.uri);
    expect(listed).toEqual([`prim://${ids.storage}/obj`]); // no files, no db schema
    const refused = await rpcError(writer.readResource({ uri }));
    expect(refused.data).toMatchObject({ code: "tool_not_allowed" });
    const schemaRefused = await rpcError(writer.readResource({ uri: `prim://${ids.db}/schema` }));
    expect(schemaRefused.data).toMatchObject({ code: "tool_not_allowed" });
    expect((await writer.listResourceTemplates()).resourceTemplates).toHaveLength(1);

    const reader = await s.connect("g", "?tools=fs_read");
    expect((await reader.readResource({ uri })).contents[0]).toMatchObject({ text: "s3cret" });
    expect((await listAll(reader)).resources.map((r) => r.uri)).toEqual([uri]);
  });

  it("refuses another group's primitive and any path traversal as not found", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    const ids = await seed(s, client);
    await ok(s, client, "fs_write", { primitive: "files", path: "/secret.txt", content: "mine" });
    await ok(s, client, "fs_write", { primitive: "files", path: "/docs/readme.md", content: "docs" });

    const other = await s.connect("other");
    const theirs = await ok(s, other, "primitive_create", { name: "files", type: "fs" });
    await ok(s, other, "fs_write", { primitive: "files", path: "/theirs.txt", content: "theirs" });
    const theirUri = `prim://${theirs.id}/theirs.txt`;
    await expectNotFound(client, theirUri);
    expect((await other.readResource({ uri: theirUri })).contents[0]).toMatchObject({ text: "theirs" });
    // By name, `files` is this group's own.
    await expectNotFound(client, "prim://files/theirs.txt");

    for (const uri of [
      `prim://${ids.fs}/docs/../secret.txt`,
      `prim://${ids.fs}/docs/%2e%2e/secret.txt`,
      `prim://${ids.fs}/docs/%2E%2E/secret.txt`,
      `prim://${ids.fs}/./secret.txt`,
      `prim://${ids.fs}/docs%2F..%2Fsecret.txt`,
      `prim://${ids.fs}//secret.txt`,
      `prim://${ids.fs}/secret.txt%00`,
      `prim://${ids.fs}/secret%zz.txt`,
      `prim://${ids.fs}/secret.txt?x=1`,
      `prim://${ids.storage}/../obj`,
    ]) {
      await expectNotFound(client, uri);
    }
    expect((await client.readResource({ uri: `prim://${ids.fs}/secret.txt` })).contents[0]).toMatchObject({
      text: "mine",
    });
  });

  it("adds a resource link after the text of file and object tool results", async () => {
    const s = await startMcpServer();
    const client = await s.connect("g");
    await seed(s, client);
    const links = async (name: string, args: Record<string, unknown>) => {
      const res = await client.callTool({ name, arguments: args });
      expect(res.isError).toBeFalsy();
      const content = res.content as { type: string }[];
      expect(content[0]?.type).toBe("text");
      return content.slice(1);
    };
    expect(await links("fs_write", { primitive: "files", path: "/a.md", content: "hi" })).toEqual([
      { type: "resource_link", uri: "prim://files/a.md", name: "/a.md" },
    ]);
    expect(await links("fs_read", { primitive: "files", path: "/a.md" })).toEqual([
      { type: "resource_link", uri: "prim://files/a.md", name: "/a.md", mimeType: "text/markdown; charset=utf-8" },
    ]);
    expect(await links("fs_read", { primitive: "files", path: "/" })).toEqual([]); // a listing
    expect(await links("fs_write", { primitive: "files", action: "mkdir", path: "/d" })).toEqual([]);
    const object = { type: "resource_link", uri: "prim://bucket/r%20x/1", name: "r x/1", mimeType: "text/plain" };
    expect(
      await links("storage_write", { primitive: "bucket", key: "r x/1", content: "o", content_type: "text/plain" }),
    ).toEqual([object]);
    expect(await links("storage_read", { primitive: "bucket", key: "r x/1" })).toEqual([object]);
    expect(await links("storage_write", { primitive: "bucket", action: "copy", from: "r x/1", to: "c" })).toEqual([
      { ...object, uri: "prim://bucket/c", name: "c" },
    ]);
    expect(await links("storage_write", { primitive: "bucket", action: "delete", key: "c" })).toEqual([]);
    // The link reads the file.
    expect((await client.readResource({ uri: "prim://bucket/r%20x/1" })).contents[0]).toMatchObject({ text: "o" });
  });

  if (mode === "remote") {
    // The remote harness passes no change feed (apps/mcp passes Redis: apps/mcp/test).
    it("declares no subscriptions without a change feed", async () => {
      const s = await startMcpServer();
      const client = await s.connect("g");
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: false, listChanged: false });
    });
  } else {
    it("sends notifications/resources/updated for a subscribed file or object, and none after unsubscribe", async () => {
      const s = await startMcpServer();
      const client = await s.connect("g");
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: false });
      const ids = await seed(s, client);
      await ok(s, client, "fs_write", { primitive: "files", path: "/notes/a.txt", content: "1" });
      await ok(s, client, "fs_write", { primitive: "files", path: "/notes/b.txt", content: "1" });
      await ok(s, client, "storage_write", { primitive: "bucket", key: "o", content: "1" });
      const a = `prim://${ids.fs}/notes/a.txt`;
      const b = `prim://files/notes/b.txt`;
      const o = `prim://${ids.storage}/o`;
      const u = updates(client);
      for (const uri of [a, b, o]) await client.subscribeResource({ uri });
      await untilNotified(u, a, () =>
        ok(s, client, "fs_write", { primitive: "files", path: "/notes/a.txt", content: "2" }),
      );

      u.seen.length = 0;
      // A write, a move away and an object copy onto the key: each names its subscribed URI.
      let next = u.next(b);
      await ok(s, client, "fs_write", { primitive: "files", path: "/notes/b.txt", content: "2" });
      await next;
      next = u.next(o);
      await ok(s, client, "storage_write", { primitive: "bucket", key: "src", content: "3" });
      await ok(s, client, "storage_write", { primitive: "bucket", action: "copy", from: "src", to: "o" });
      await next;
      next = u.next(a);
      await ok(s, client, "fs_write", { primitive: "files", action: "move", from: "/notes", to: "/moved" });
      await next;
      expect(u.seen.filter((x) => x === o)).toHaveLength(1); // `src` was not subscribed

      // After unsubscribing a: its writes send nothing (a notice of b, written after, comes alone).
      await client.unsubscribeResource({ uri: a });
      u.seen.length = 0;
      next = u.next(o);
      await ok(s, client, "fs_write", { primitive: "files", path: "/notes/a.txt", content: "3" });
      await ok(s, client, "storage_write", { primitive: "bucket", key: "o", content: "4" });
      await next;
      expect(u.seen).toEqual([o]);

      // Subscribing is a read: refused without the type's read tool (a session with it succeeds).
      const writer = await s.connect("g", "?tools=fs_write,storage_write");
      const refused = await rpcError(writer.subscribeResource({ uri: a }));
      expect(refused.data).toMatchObject({ code: "tool_not_allowed" });
      await expect(client.subscribeResource({ uri: a })).resolves.toEqual({});
      const missing = await rpcError(client.subscribeResource({ uri: `prim://${ids.fs}/../x` }));
      expect(missing.code).toBe(-32002);
    });
  }
});
