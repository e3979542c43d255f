import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { LOCAL_PRINCIPAL } from "@prim/engine";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { blobFiles, OBJECT_FIELDS, pattern, sha256, sleep, withStorage } from "./storage-helpers.js";

type Server = Awaited<ReturnType<typeof withStorage>>;

/** Writes small objects straight through the engine (fast seeding for listings). */
async function seed(server: Server, keys: string[]) {
  for (const key of keys) {
    await server.engine.invoke(LOCAL_PRINCIPAL, "storage.put", server.store.id, {
      key,
      body: Readable.from([Buffer.from(key)]),
    });
  }
}

/** Every page of a listing, followed through next_cursor. */
async function allPages(server: Server, query: string) {
  const pages: { data: string[]; prefixes: string[] }[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const q: string = cursor === null ? query : `${query}&cursor=${encodeURIComponent(cursor)}`;
    const res = await server.api<any>("GET", `${server.base}/objects?${q}`);
    expect(res.status).toBe(200);
    pages.push({ data: res.body.data.map((o: { key: string }) => o.key), prefixes: res.body.prefixes });
    cursor = res.body.next_cursor;
    if (cursor === null) break;
  }
  return pages;
}

describe("storage: listing", () => {
  it("lists ObjectInfo in key order with prefixes and next_cursor", async () => {
    const server = await withStorage();
    await server.put("b.txt", "bb", { "content-type": "text/plain", "x-object-meta-n": "1" });
    await seed(server, ["c/1", "a", "a/2", "a/1"]);
    const res = await server.api("GET", `${server.base}/objects`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["data", "next_cursor", "prefixes"]);
    expect(res.body.data.map((o: { key: string }) => o.key)).toEqual(["a", "a/1", "a/2", "b.txt", "c/1"]);
    expect(res.body.prefixes).toEqual([]);
    expect(res.body.next_cursor).toBeNull();
    const b = res.body.data[3];
    expect(Object.keys(b).sort()).toEqual(OBJECT_FIELDS);
    expect(b).toMatchObject({
      size: 2,
      content_type: "text/plain",
      metadata: { n: "1" },
      etag: `"${sha256(Buffer.from("bb"))}"`,
    });
  });

  it("filters by prefix", async () => {
    const server = await withStorage();
    await seed(server, ["img/a.png", "img/b.png", "imgx", "doc/a", "im"]);
    const res = await server.api("GET", `${server.base}/objects?prefix=img/`);
    expect(res.body.data.map((o: { key: string }) => o.key)).toEqual(["img/a.png", "img/b.png"]);
    const none = await server.api("GET", `${server.base}/objects?prefix=zzz`);
    expect(none.body).toEqual({ data: [], prefixes: [], next_cursor: null });
  });

  it("rolls keys up into common prefixes with a delimiter", async () => {
    const server = await withStorage();
    await seed(server, ["a/1", "a/2", "b/1", "c"]);
    const res = await server.api("GET", `${server.base}/objects?delimiter=/`);
    expect(res.body.data.map((o: { key: string }) => o.key)).toEqual(["c"]);
    expect(res.body.prefixes).toEqual(["a/", "b/"]);
    expect(res.body.next_cursor).toBeNull();
  });

  it("rolls up below a prefix", async () => {
    const server = await withStorage();
    await seed(server, ["a/1", "a/x/1", "a/x/2", "a/y", "a/z/deep/1", "b/1"]);
    const res = await server.api("GET", `${server.base}/objects?prefix=a/&delimiter=/`);
    expect(res.body.data.map((o: { key: string }) => o.key)).toEqual(["a/1", "a/y"]);
    expect(res.body.prefixes).toEqual(["a/x/", "a/z/"]);
  });

  it("pages with limit and cursor without gaps or duplicates", async () => {
    const server = await withStorage();
    const keys = ["k1", "k2", "k3", "k4", "k5"];
    await seed(server, [...keys].reverse());
    const pages = await allPages(server, "limit=2");
    expect(pages.map((p) => p.data)).toEqual([["k1", "k2"], ["k3", "k4"], ["k5"]]);
    // Exactly a full page: the last page has no cursor.
    const exact = await server.api("GET", `${server.base}/objects?limit=5`);
    expect(exact.body.data).toHaveLength(5);
    expect(exact.body.next_cursor).toBeNull();
  });

  it("pages across rolled-up prefixes, each prefix counted once and never repeated", async () => {
    const server = await withStorage();
    await seed(server, ["a/1", "a/2", "a/3", "b", "c/1", "c/2", "d", "e/1", "e/2/x"]);
    const whole = (await server.api("GET", `${server.base}/objects?delimiter=/`)).body;
    expect(whole.data.map((o: { key: string }) => o.key)).toEqual(["b", "d"]);
    expect(whole.prefixes).toEqual(["a/", "c/", "e/"]);
    for (const limit of [1, 2, 3, 4]) {
      const pages = await allPages(server, `delimiter=/&limit=${limit}`);
      for (const page of pages) expect(page.data.length + page.prefixes.length).toBeLessThanOrEqual(limit);
      expect(pages.flatMap((p) => p.data)).toEqual(["b", "d"]);
      expect(pages.flatMap((p) => p.prefixes)).toEqual(["a/", "c/", "e/"]);
      expect(pages.length).toBe(Math.ceil(5 / limit));
    }
  });

  it("defaults to 100 per page and accepts up to 1000", async () => {
    const server = await withStorage();
    await seed(
      server,
      Array.from({ length: 101 }, (_, i) => `obj-${String(i).padStart(3, "0")}`),
    );
    const first = await server.api("GET", `${server.base}/objects`);
    expect(first.body.data).toHaveLength(100);
    expect(first.body.next_cursor).not.toBeNull();
    const rest = await server.api("GET", `${server.base}/objects?cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(rest.body.data.map((o: { key: string }) => o.key)).toEqual(["obj-100"]);
    expect((await server.api("GET", `${server.base}/objects?limit=1000`)).body.data).toHaveLength(101);
  });

  it("answers 400 for a limit over 1000, a zero limit, an empty delimiter and a foreign cursor", async () => {
    const { api, base } = await withStorage();
    for (const query of ["limit=1001", "limit=0", "limit=abc", "delimiter=", "cursor=bm90LWEtY3Vyc29y"]) {
      const res = await api("GET", `${base}/objects?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("invalid_request");
    }
  });
});

describe("storage: copy", () => {
  it("copies by reference: the copy shares the blob, no new file is written", async () => {
    const { put, get, api, base, dataDir, clock } = await withStorage();
    const bytes = pattern(200 * 1024, 9);
    const src = (await put("src", bytes, { "content-type": "image/png", "x-object-meta-a": "1" })).json;
    const before = blobFiles(dataDir);
    expect(before).toEqual([sha256(bytes)]);
    clock.advance(5000);
    const copy = await api("POST", `${base}/copy`, { from: "src", to: "dir/dst" });
    expect(copy.status).toBe(200);
    expect(Object.keys(copy.body).sort()).toEqual(OBJECT_FIELDS);
    expect(copy.body).toMatchObject({
      key: "dir/dst",
      size: src.size,
      etag: src.etag,
      content_type: "image/png",
      metadata: { a: "1" },
      created_at: clock.now(),
      updated_at: clock.now(),
    });
    expect(blobFiles(dataDir)).toEqual(before);
    expect((await get("dir/dst")).bytes.equals(bytes)).toBe(true);
  });

  it("copies inline objects too", async () => {
    const { put, get, api, base } = await withStorage();
    await put("small", "tiny", { "content-type": "text/plain" });
    expect((await api("POST", `${base}/copy`, { from: "small", to: "small2" })).status).toBe(200);
    const read = await get("small2");
    expect(read.bytes.toString()).toBe("tiny");
    expect(read.headers.get("content-type")).toBe("text/plain");
  });

  it("answers 412 for if_none_match * onto an existing key and keeps the target", async () => {
    const { put, get, api, base } = await withStorage();
    await put("src", "source");
    await put("dst", "target");
    const res = await api("POST", `${base}/copy`, { from: "src", to: "dst", if_none_match: "*" });
    expect(res.status).toBe(412);
    expect(res.body.error.code).toBe("precondition_failed");
    expect((await get("dst")).bytes.toString()).toBe("target");
    expect((await api("POST", `${base}/copy`, { from: "src", to: "new", if_none_match: "*" })).status).toBe(200);
    expect((await api("POST", `${base}/copy`, { from: "src", to: "dst" })).status).toBe(200);
    expect((await get("dst")).bytes.toString()).toBe("source");
  });

  it("answers 404 not_found copying a missing object, and 413 for a target key too long", async () => {
    const { put, get, api, base } = await withStorage();
    const res = await api("POST", `${base}/copy`, { from: "ghost", to: "x" });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect(res.body.error.message).toContain("ghost");
    expect((await get("x")).status).toBe(404);
    await put("src", "s");
    const long = await api("POST", `${base}/copy`, { from: "src", to: "k".repeat(1025) });
    expect(long.status).toBe(413);
    expect(long.body.error.code).toBe("payload_too_large");
  });

  it("keeps the copy readable after the source is deleted, and collects the blob after both", async () => {
    const { put, get, api, base, dataDir, engine } = await withStorage();
    const bytes = pattern(100 * 1024, 4);
    await put("src", bytes);
    await api("POST", `${base}/copy`, { from: "src", to: "dst" });
    expect((await api("DELETE", `${base}/objects/src`)).status).toBe(204);
    expect((await get("dst")).bytes.equals(bytes)).toBe(true);
    expect(await engine.services.blobCollector.collect(0)).toBe(0);
    expect(blobFiles(dataDir)).toEqual([sha256(bytes)]);
    expect((await get("dst")).bytes.equals(bytes)).toBe(true);
    expect((await api("DELETE", `${base}/objects/dst`)).status).toBe(204);
    expect(await engine.services.blobCollector.collect(0)).toBe(1);
    expect(blobFiles(dataDir)).toEqual([]);
  });
});

describe("storage: blobs", () => {
  it("stores the same content once and keeps it while any object names it", async () => {
    const { put, get, api, base, dataDir, engine } = await withStorage();
    const bytes = pattern(64 * 1024, 6);
    await put("one", bytes);
    await put("two", bytes);
    expect(blobFiles(dataDir)).toEqual([sha256(bytes)]);
    await api("DELETE", `${base}/objects/one`);
    expect(await engine.services.blobCollector.collect(0)).toBe(0);
    expect((await get("two")).bytes.equals(bytes)).toBe(true);
  });

  it("keeps objects of 16 KiB inline and stores larger ones as blobs", async () => {
    const { put, dataDir } = await withStorage();
    await put("inline", pattern(16 * 1024));
    expect(blobFiles(dataDir)).toEqual([]);
    const larger = pattern(16 * 1024 + 1);
    await put("blob", larger);
    expect(blobFiles(dataDir)).toEqual([sha256(larger)]);
  });

  it("frees the old blob of an overwritten object on collection", async () => {
    const { put, get, dataDir, engine } = await withStorage();
    const v1 = pattern(50 * 1024, 1);
    const v2 = pattern(50 * 1024, 2);
    await put("obj", v1);
    await put("obj", v2);
    expect(blobFiles(dataDir)).toEqual([sha256(v1), sha256(v2)].sort());
    expect(await engine.services.blobCollector.collect(0)).toBe(1);
    expect(blobFiles(dataDir)).toEqual([sha256(v2)]);
    expect((await get("obj")).bytes.equals(v2)).toBe(true);
  });

  it("collects the blobs of a deleted store", async () => {
    const { put, api, store, dataDir, engine } = await withStorage();
    await put("obj", pattern(30 * 1024));
    expect((await api("DELETE", `/v1/primitives/${store.id}`)).status).toBe(204);
    expect(await engine.services.blobCollector.collect(0)).toBe(1);
    expect(blobFiles(dataDir)).toEqual([]);
  });
});

describe("storage: export", () => {
  it("exports a self-contained SQLite file with every object's bytes and metadata", async () => {
    const { base, put, url, dataDir } = await withStorage();
    const big = pattern(100 * 1024);
    await put("small.txt", Buffer.from("tiny"), { "content-type": "text/plain", "x-object-meta-owner": "ada" });
    await put("big.bin", big);
    const res = await fetch(`${url}${base}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    const file = join(mkdtempSync(join(tmpdir(), "prim-export-")), "store.sqlite");
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const db = new Database(file, { readonly: true });
    const rows = db.prepare("SELECT key, size, content_type, metadata, body, blob FROM objects ORDER BY key").all() as {
      key: string;
      content_type: string;
      metadata: string;
      body: Buffer;
      blob: string | null;
    }[];
    db.close();
    expect(rows.map((r) => r.key)).toEqual(["big.bin", "small.txt"]);
    expect(rows[0]?.blob).toBeNull();
    expect(rows[0]?.body.equals(big)).toBe(true);
    expect(rows[1]).toMatchObject({ content_type: "text/plain", metadata: JSON.stringify({ owner: "ada" }) });
    expect(rows[1]?.body.toString()).toBe("tiny");
    // The temporary export is deleted once it has been sent.
    for (let i = 0; i < 50 && readdirSync(join(dataDir, "tmp")).length > 0; i++) await sleep(20);
    expect(readdirSync(join(dataDir, "tmp"))).toEqual([]);
  });
});
