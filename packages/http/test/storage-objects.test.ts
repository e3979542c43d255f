import { LOCAL_PRINCIPAL, type Principal } from "@prim/engine";
import { onCloudTarget } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { keyPath, OBJECT_FIELDS, pattern, rawRequest, sha256, withStorage } from "./storage-helpers.js";

describe("storage: put and read", () => {
  it("returns the bytes exactly, with ObjectInfo and every object header", async () => {
    const { put, get, clock } = await withStorage();
    for (const [key, bytes] of [
      ["small.bin", pattern(1000)],
      ["large.bin", pattern(200 * 1024, 3)],
    ] as const) {
      const res = await put(key, bytes, { "content-type": "image/png", "x-object-meta-Author": "Ada" });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json).sort()).toEqual(OBJECT_FIELDS);
      const sha = sha256(bytes);
      expect(res.json).toEqual({
        key,
        size: bytes.length,
        etag: `"${sha}"`,
        content_type: "image/png",
        metadata: { author: "Ada" },
        created_at: clock.now(),
        updated_at: clock.now(),
      });
      const read = await get(key);
      expect(read.status).toBe(200);
      expect(read.bytes.equals(bytes)).toBe(true);
      expect(read.headers.get("etag")).toBe(`"${sha}"`);
      expect(read.headers.get("content-type")).toBe("image/png");
      expect(read.headers.get("content-length")).toBe(String(bytes.length));
      expect(read.headers.get("accept-ranges")).toBe("bytes");
      expect(read.headers.get("last-modified")).toBe(new Date(clock.now()).toUTCString());
      expect(read.headers.get("x-object-meta-author")).toBe("Ada");
      expect(read.headers.get("x-content-type-options")).toBe("nosniff");
      expect(read.headers.get("content-security-policy")).toBe("sandbox");
    }
  });

  it("answers HEAD with the headers and no body, and ?stat=1 with ObjectInfo JSON", async () => {
    const { put, get, api, base } = await withStorage();
    const info = (await put("doc.txt", "hello world", { "content-type": "text/plain" })).json;
    const head = await get("doc.txt", {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    expect(head.headers.get("content-length")).toBe("11");
    expect(head.headers.get("etag")).toBe(info.etag);
    expect(head.headers.get("content-type")).toBe("text/plain");
    expect(head.headers.get("x-content-type-options")).toBe("nosniff");
    const stat = await api("GET", `${base}/objects/doc.txt?stat=1`);
    expect(stat.status).toBe(200);
    expect(stat.headers.get("content-type")).toContain("application/json");
    expect(stat.body).toEqual(info);
  });

  it("keeps keys with slashes, spaces and unicode", async () => {
    const { put, get, api, base } = await withStorage();
    const keys = ["a/b/c.txt", "with space.txt", "ünï/cødé/😀.bin", "100% sure", "q?x=1#h"];
    for (const key of keys) {
      const res = await put(keyPath(key), key);
      expect(res.status).toBe(200);
      expect(res.json.key).toBe(key);
      const read = await get(keyPath(key));
      expect(read.bytes.toString()).toBe(key);
    }
    const list = await api("GET", `${base}/objects`);
    expect(list.body.data.map((o: { key: string }) => o.key)).toEqual([...keys].sort());
  });

  it("answers 404 not_found naming a missing object, for GET, HEAD and stat", async () => {
    const { get, api, base } = await withStorage();
    const res = await api("GET", `${base}/objects/nope/missing.txt`);
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(res.body.error.code).toBe("not_found");
    expect(res.body.error.message).toContain("nope/missing.txt");
    expect((await get("nope", {}, "HEAD")).status).toBe(404);
    expect((await api("GET", `${base}/objects/nope?stat=1`)).status).toBe(404);
  });

  it("defaults the content type to application/octet-stream when none is sent", async () => {
    const { url, base, get, auth } = await withStorage();
    const res = await rawRequest(`${url}${base}/objects/untyped`, {
      method: "PUT",
      headers: auth,
      body: Buffer.from("raw bytes"),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString()).content_type).toBe("application/octet-stream");
    const read = await get("untyped");
    expect(read.headers.get("content-type")).toBe("application/octet-stream");
    expect(read.bytes.toString()).toBe("raw bytes");
  });

  it("stores an empty object", async () => {
    const { put, get } = await withStorage();
    const res = await put("empty", Buffer.alloc(0));
    expect(res.status).toBe(200);
    expect(res.json.size).toBe(0);
    const read = await get("empty");
    expect(read.status).toBe(200);
    expect(read.bytes.length).toBe(0);
    expect(read.headers.get("content-length")).toBe("0");
  });
});

describe("storage: conditional requests", () => {
  it("answers 304 to If-None-Match with the ETag or *, and 200 otherwise", async () => {
    const { put, get } = await withStorage();
    const { etag } = (await put("a", "alpha", { "x-object-meta-k": "v" })).json;
    const hit = await get("a", { "if-none-match": etag });
    expect(hit.status).toBe(304);
    expect(hit.bytes.length).toBe(0);
    expect(hit.headers.get("etag")).toBe(etag);
    expect((await get("a", { "if-none-match": "*" })).status).toBe(304);
    expect((await get("a", { "if-none-match": `"other", ${etag}` })).status).toBe(304);
    const miss = await get("a", { "if-none-match": '"0000"' });
    expect(miss.status).toBe(200);
    expect(miss.bytes.toString()).toBe("alpha");
  });

  it("refuses If-None-Match: * on an existing object with 412 and keeps it", async () => {
    const { put, get } = await withStorage();
    expect((await put("a", "first", { "if-none-match": "*" })).status).toBe(200);
    const again = await put("a", "second", { "if-none-match": "*" });
    expect(again.status).toBe(412);
    expect(again.json.error.code).toBe("precondition_failed");
    expect((await get("a")).bytes.toString()).toBe("first");
    // Same for a blob-sized body.
    const big = await put("a", pattern(64 * 1024), { "if-none-match": "*" });
    expect(big.status).toBe(412);
    expect((await get("a")).bytes.toString()).toBe("first");
  });

  it("writes with If-Match only when the ETag matches", async () => {
    const { put, get } = await withStorage();
    const { etag } = (await put("a", "v1")).json;
    const wrong = await put("a", "v2", { "if-match": '"deadbeef"' });
    expect(wrong.status).toBe(412);
    expect(wrong.json.error.code).toBe("precondition_failed");
    expect((await get("a")).bytes.toString()).toBe("v1");
    const right = await put("a", "v2", { "if-match": etag });
    expect(right.status).toBe(200);
    expect((await get("a")).bytes.toString()).toBe("v2");
    // If-Match on a missing object fails too.
    expect((await put("missing", "x", { "if-match": etag })).status).toBe(412);
    expect((await get("missing")).status).toBe(404);
  });

  it("deletes with 204 even when absent, and keeps the object on a failing If-Match", async () => {
    const { put, get, api, base } = await withStorage();
    const { etag } = (await put("a", "keep me")).json;
    const wrong = await api("DELETE", `${base}/objects/a`, undefined, { "if-match": '"nope"' });
    expect(wrong.status).toBe(412);
    expect(wrong.body.error.code).toBe("precondition_failed");
    expect((await get("a")).bytes.toString()).toBe("keep me");
    const ok = await api("DELETE", `${base}/objects/a`, undefined, { "if-match": etag });
    expect(ok.status).toBe(204);
    expect(ok.text).toBe("");
    expect((await get("a")).status).toBe(404);
    expect((await api("DELETE", `${base}/objects/a`)).status).toBe(204);
    expect((await api("DELETE", `${base}/objects/never/was`)).status).toBe(204);
  });
});

describe("storage: limits", () => {
  it("answers 413 payload_too_large for a key over 1024 UTF-8 bytes", async () => {
    const { put, get } = await withStorage();
    const res = await put("k".repeat(1025), "x");
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe("payload_too_large");
    expect((await get("k".repeat(1025))).status).toBe(404);
    expect((await put("k".repeat(1024), "x")).status).toBe(200);
    // 342 three-byte characters are 1026 bytes: too long although only 342 characters.
    expect((await put(encodeURIComponent("€".repeat(342)), "x")).status).toBe(413);
  });

  it("accepts a multi-byte key of up to 1024 bytes and reads it back", async () => {
    const { put, get } = await withStorage();
    const key = "€".repeat(341); // 1023 bytes, 3069 characters once percent-encoded
    const res = await put(encodeURIComponent(key), "euro");
    expect(res.status).toBe(200);
    expect(res.json.key).toBe(key);
    expect((await get(encodeURIComponent(key))).bytes.toString()).toBe("euro");
  });

  it("answers 400 for an empty key and for control characters in a key", async () => {
    const { put, api, base } = await withStorage();
    const empty = await put("", "x");
    expect(empty.status).toBe(400);
    expect(empty.json.error.code).toBe("invalid_request");
    expect((await put("a%01b", "x")).status).toBe(400);
    expect((await put("line%0Abreak", "x")).status).toBe(400);
    expect((await api("POST", `${base}/copy`, { from: "a", to: "b\u0000" })).status).toBe(400);
    expect((await api("GET", `${base}/objects`)).body.data).toEqual([]);
  });

  it("answers 400 for metadata over 2048 bytes and stores nothing", async () => {
    const { put, get } = await withStorage();
    // name "big" (3 bytes) + value: 2048 bytes in all fits, one more does not.
    expect((await put("fits", "x", { "x-object-meta-big": "v".repeat(2045) })).status).toBe(200);
    const res = await put("over", "x", { "x-object-meta-big": "v".repeat(2046) });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_request");
    expect((await get("over")).status).toBe(404);
    const many = await put("over", "x", { "x-object-meta-a": "v".repeat(1500), "x-object-meta-b": "v".repeat(1500) });
    expect(many.status).toBe(400);
  });
});

describe("storage: stats, pause and tools", () => {
  it("counts objects in items and blob bytes in size_bytes", async () => {
    const { put, api, base } = await withStorage();
    await put("big1", pattern(100 * 1024, 1));
    await put("big2", pattern(150 * 1024, 2));
    await put("small", "tiny");
    const stats = await api("GET", `${base}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ type: "storage", items: 3, paused: false });
    expect(stats.body.size_bytes).toBeGreaterThanOrEqual(250 * 1024);
    await api("DELETE", `${base}/objects/big1`);
    expect((await api("GET", `${base}/stats`)).body.items).toBe(2);
  });

  it("answers 423 paused on data routes of a paused store, while stats still work", async () => {
    const { put, get, api, base, engine, store } = await withStorage();
    await put("a", "x");
    await engine.services.catalog.updatePrimitive(store.id, { paused: true });
    for (const res of [await put("a", "y"), await get("a")]) {
      expect(res.status).toBe(423);
      expect(res.json.error.code).toBe("paused");
    }
    for (const res of [
      await api("GET", `${base}/objects`),
      await api("GET", `${base}/objects/a?stat=1`),
      await api("DELETE", `${base}/objects/a`),
      await api("POST", `${base}/copy`, { from: "a", to: "b" }),
      await api("POST", `${base}/presign`, { key: "a" }),
    ]) {
      expect(res.status).toBe(423);
      expect(res.body.error.code).toBe("paused");
    }
    expect((await api("GET", `${base}/stats`)).body).toMatchObject({ items: 1, paused: true });
    await engine.services.catalog.updatePrimitive(store.id, { paused: false });
    expect((await get("a")).bytes.toString()).toBe("x");
  });

  it.skipIf(onCloudTarget())("gates object routes by the tool allowlist of a scoped credential", async () => {
    let scoped: Principal = LOCAL_PRINCIPAL;
    const server = await withStorage({
      authenticate: (req) => (req.headers.authorization === "Bearer scoped" ? scoped : LOCAL_PRINCIPAL),
    });
    const { put, base, api, store } = server;
    const group = (await api("GET", "/v1/groups/app")).body;
    const as = (tools: string[]) => {
      scoped = { kind: "scoped", workspace: "local", actor: "key:key_1", groupId: group.id, tools };
    };
    const auth = { authorization: "Bearer scoped" };
    await put("a", "hello");

    as(["storage_read"]);
    const read = await server.get("a", auth);
    expect(read.status).toBe(200);
    expect(read.bytes.toString()).toBe("hello");
    expect((await api("GET", `${base}/objects/a?stat=1`, undefined, auth)).status).toBe(200);
    expect((await api("GET", `${base}/stats`, undefined, auth)).status).toBe(200);
    const write = await put("a", "changed", auth);
    expect(write.status).toBe(403);
    expect(write.json.error.code).toBe("tool_not_allowed");
    expect((await api("DELETE", `${base}/objects/a`, undefined, auth)).body.error.code).toBe("tool_not_allowed");
    expect((await api("GET", `${base}/objects`, undefined, auth)).body.error.code).toBe("tool_not_allowed");
    const presign = await api("POST", `${base}/presign`, { key: "a" }, auth);
    expect(presign.status).toBe(403);
    expect(presign.body.error.code).toBe("tool_not_allowed");
    expect((await server.get("a")).bytes.toString()).toBe("hello");

    as(["storage_list", "storage_write"]);
    expect((await api("GET", `${base}/objects`, undefined, auth)).status).toBe(200);
    expect((await put("a", "changed", auth)).status).toBe(200);
    expect((await api("POST", `${base}/copy`, { from: "a", to: "b" }, auth)).status).toBe(200);
    expect((await server.get("a", auth)).json.error.code).toBe("tool_not_allowed");

    as(["storage_sign"]);
    const signed = await api("POST", `${base}/presign`, { key: "a" }, auth);
    expect(signed.status).toBe(200);
    expect((await api("POST", `${base}/presign/revoke`, undefined, auth)).status).toBe(200);
    expect(store.type).toBe("storage");
  });

  it("answers 400 wrong_type for object routes on a primitive of another type", async () => {
    const { api } = await withStorage();
    const kv = (await api("POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" })).body;
    const res = await api("GET", `/v1/primitives/${kv.id}/objects/a`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("wrong_type");
    expect(res.body.error.message).toContain("kv");
  });
});
