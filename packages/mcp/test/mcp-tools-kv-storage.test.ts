// kv_get, kv_list, kv_set, kv_delete and storage_list, storage_read, storage_write, storage_sign
// over Streamable HTTP: every action, with the structured result checked.
import { expect, it } from "vitest";
import { forEachInvoker, inProcessOnly, withStore } from "./helpers.js";

/** The MCP tools' inline content limit, stated here so a change to it fails this test: 1 MiB. */
const MAX_INLINE_BYTES = 1_048_576;

forEachInvoker("MCP tools: kv", () => {
  it("kv_set sets (json, bytes, ttl, if_version), kv_get reads a key or several", async () => {
    const { s, client, ok } = await withStore("kv");
    const set = await ok("kv_set", { primitive: "store", key: "user/1", value: { name: "Ada" } });
    expect(set).toMatchObject({ key: "user/1", value: { name: "Ada" }, encoding: "json", version: 1 });
    const again = await ok("kv_set", {
      primitive: "store",
      action: "set",
      key: "user/1",
      value: [1, 2],
      if_version: 1,
    });
    expect(again).toMatchObject({ value: [1, 2], version: 2 });
    const stale = await s.call(client, "kv_set", { primitive: "store", key: "user/1", value: 0, if_version: 1 });
    expect(stale).toMatchObject({ isError: true, data: { error: { code: "precondition_failed" } } });
    const bytes = Buffer.from([0, 255, 10]).toString("base64");
    const raw = await ok("kv_set", { primitive: "store", key: "raw", value: bytes, encoding: "bytes", ttl: "1h" });
    expect(raw).toMatchObject({ key: "raw", value: bytes, encoding: "bytes" });
    expect(raw.expires_at).toBe(1_800_000_000_000 + 3_600_000);

    const one = await ok("kv_get", { primitive: "store", key: "user/1" });
    expect(one).toMatchObject({ key: "user/1", value: [1, 2], version: 2, expires_at: null });
    const many = await ok("kv_get", { primitive: "store", keys: ["raw", "nope", "user/1"] });
    expect(many.data).toHaveLength(3);
    expect(many.data[0]).toMatchObject({ key: "raw", value: bytes, encoding: "bytes" });
    expect(many.data[1]).toBeNull();
    expect(many.data[2]).toMatchObject({ key: "user/1", value: [1, 2] });
    const missing = await s.call(client, "kv_get", { primitive: "store", key: "nope" });
    expect(missing).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
  });

  it("kv_set mset and incr; kv_list pages with prefix and values", async () => {
    const { s, client, ok } = await withStore("kv");
    const mset = await ok("kv_set", {
      primitive: "store",
      action: "mset",
      items: [
        { key: "a/1", value: 1 },
        { key: "a/2", value: "two" },
        { key: "b/1", value: true, ttl: "5m" },
      ],
    });
    expect(mset.data.map((e: { key: string; version: number }) => [e.key, e.version])).toEqual([
      ["a/1", 1],
      ["a/2", 1],
      ["b/1", 1],
    ]);
    const incr = await ok("kv_set", { primitive: "store", action: "incr", key: "counter", by: 5 });
    expect(incr).toMatchObject({ key: "counter", value: 5 });
    expect((await ok("kv_set", { primitive: "store", action: "incr", key: "counter" })).value).toBe(6);
    const notInt = await s.call(client, "kv_set", { primitive: "store", action: "incr", key: "a/2" });
    expect(notInt.isError).toBe(true);
    // A typo inside an item is refused, not dropped (it would set the key without its TTL).
    const typo = await s.call(client, "kv_set", {
      primitive: "store",
      action: "mset",
      items: [{ key: "t", value: 1, tll: "1h" }],
    });
    expect(typo).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
    expect(typo.data.error.message).toContain("tll");

    const keys = await ok("kv_list", { primitive: "store" });
    expect(keys.data.map((e: { key: string }) => e.key)).toEqual(["a/1", "a/2", "b/1", "counter"]);
    expect(keys.data[0].value).toBeUndefined();
    const prefixed = await ok("kv_list", { primitive: "store", prefix: "a/", values: true });
    expect(prefixed.data.map((e: { key: string; value: unknown }) => [e.key, e.value])).toEqual([
      ["a/1", 1],
      ["a/2", "two"],
    ]);
    const first = await ok("kv_list", { primitive: "store", limit: 2 });
    expect(first.data.map((e: { key: string }) => e.key)).toEqual(["a/1", "a/2"]);
    const next = await ok("kv_list", { primitive: "store", limit: 2, cursor: first.next_cursor });
    expect(next.data.map((e: { key: string }) => e.key)).toEqual(["b/1", "counter"]);
  });

  it("kv_delete deletes one key or several", async () => {
    const { s, client, ok } = await withStore("kv");
    await ok("kv_set", {
      primitive: "store",
      action: "mset",
      items: ["a", "b", "c", "d"].map((key) => ({ key, value: key })),
    });
    expect(await ok("kv_delete", { primitive: "store", key: "a", if_version: 1 })).toEqual({ deleted: true });
    expect(await ok("kv_delete", { primitive: "store", keys: ["b", "c", "zz"] })).toEqual({ deleted: 2 });
    const left = await ok("kv_list", { primitive: "store" });
    expect(left.data.map((e: { key: string }) => e.key)).toEqual(["d"]);
    const wrongVersion = await s.call(client, "kv_delete", { primitive: "store", key: "d", if_version: 7 });
    expect(wrongVersion).toMatchObject({ isError: true, data: { error: { code: "precondition_failed" } } });
  });
});

forEachInvoker("MCP tools: storage", () => {
  it("storage_write puts utf8 and base64, storage_read returns content or stat, storage_list lists", async () => {
    const { s, client, ok } = await withStore("storage");
    const text = await ok("storage_write", {
      primitive: "store",
      key: "docs/readme.txt",
      content: "héllo",
      content_type: "text/plain",
      metadata: { author: "ada" },
    });
    expect(text).toMatchObject({
      key: "docs/readme.txt",
      size: 6,
      content_type: "text/plain",
      metadata: { author: "ada" },
    });
    expect(text.etag).toMatch(/^"[0-9a-f]{64}"$/);
    const binary = Buffer.from([0xff, 0x00, 0x80, 0x7f]);
    const bin = await ok("storage_write", {
      primitive: "store",
      action: "put",
      key: "img/a.bin",
      content: binary.toString("base64"),
      encoding: "base64",
    });
    expect(bin).toMatchObject({ key: "img/a.bin", size: 4, content_type: "application/octet-stream" });

    const read = await ok("storage_read", { primitive: "store", key: "docs/readme.txt" });
    expect(read).toMatchObject({ key: "docs/readme.txt", size: 6, etag: text.etag, metadata: { author: "ada" } });
    expect(read.content).toEqual({ text: "héllo" }); // UTF-8: text only
    const readBin = await ok("storage_read", { primitive: "store", key: "img/a.bin" });
    expect(readBin.content).toEqual({ base64: binary.toString("base64") }); // not UTF-8: no text
    const stat = await ok("storage_read", { primitive: "store", key: "img/a.bin", stat: true });
    expect(stat).toMatchObject({ key: "img/a.bin", size: 4, etag: bin.etag });
    expect(stat.content).toBeUndefined();
    const bad = await s.call(client, "storage_write", {
      primitive: "store",
      key: "x",
      content: "%%",
      encoding: "base64",
    });
    expect(bad).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });

    const all = await ok("storage_list", { primitive: "store" });
    expect(all.data.map((o: { key: string }) => o.key)).toEqual(["docs/readme.txt", "img/a.bin"]);
    const folders = await ok("storage_list", { primitive: "store", delimiter: "/" });
    expect(folders.prefixes).toEqual(["docs/", "img/"]);
    expect(folders.data).toEqual([]);
    const docs = await ok("storage_list", { primitive: "store", prefix: "docs/" });
    expect(docs.data.map((o: { key: string }) => o.key)).toEqual(["docs/readme.txt"]);
    const paged = await ok("storage_list", { primitive: "store", limit: 1 });
    expect(paged.data).toHaveLength(1);
    const rest = await ok("storage_list", { primitive: "store", limit: 1, cursor: paged.next_cursor });
    expect(rest.data.map((o: { key: string }) => o.key)).toEqual(["img/a.bin"]);
  });

  it("storage_write copies and deletes", async () => {
    const { s, client, ok } = await withStore("storage");
    await ok("storage_write", { primitive: "store", key: "a", content: "original" });
    const copy = await ok("storage_write", { primitive: "store", action: "copy", from: "a", to: "b" });
    expect(copy).toMatchObject({ key: "b", size: 8 });
    expect((await ok("storage_read", { primitive: "store", key: "b" })).content.text).toBe("original");
    await ok("storage_write", { primitive: "store", action: "delete", key: "a" });
    const gone = await s.call(client, "storage_read", { primitive: "store", key: "a" });
    expect(gone).toMatchObject({ isError: true, data: { error: { code: "not_found" } } });
    const listed = await ok("storage_list", { primitive: "store" });
    expect(listed.data.map((o: { key: string }) => o.key)).toEqual(["b"]);
  });

  // Signed URLs are REST routes, served by the engine process itself in remote runs.
  it("storage_read of an object over 1 MiB is payload_too_large and points at storage_sign", async () => {
    const { s, client, ok } = await withStore("storage");
    const big = Buffer.alloc(MAX_INLINE_BYTES + 1, 0x61);
    await ok("storage_write", {
      primitive: "store",
      key: "big.bin",
      content: big.toString("base64"),
      encoding: "base64",
    });
    const res = await s.call(client, "storage_read", { primitive: "store", key: "big.bin" });
    expect(res.isError).toBe(true);
    expect(res.data.error.code).toBe("payload_too_large");
    expect(res.data.error.message).toContain("storage_sign");
    expect(res.text?.length).toBeLessThan(1000); // no bytes came back
    // Exactly 1 MiB still comes back inline; stat of the big one works.
    await ok("storage_write", {
      primitive: "store",
      key: "edge.bin",
      content: big.subarray(1).toString("base64"),
      encoding: "base64",
    });
    const edge = await ok("storage_read", { primitive: "store", key: "edge.bin" });
    expect(edge.content.text.length).toBe(MAX_INLINE_BYTES); // ASCII: text only
    expect((await ok("storage_read", { primitive: "store", key: "big.bin", stat: true })).size).toBe(
      MAX_INLINE_BYTES + 1,
    );
  });
});

// What needs the engine in this process (its clock, REST routes or local auth): once.
inProcessOnly("MCP tools: storage", () => {
  it("storage_sign presigns an absolute URL that downloads with plain fetch, and revokes", async () => {
    const { s, ok } = await withStore("storage");
    await ok("storage_write", {
      primitive: "store",
      key: "report.csv",
      content: "a,b\n1,2\n",
      content_type: "text/csv",
    });
    const signed = await ok("storage_sign", { primitive: "store", key: "report.csv", expires_in: "15m" });
    expect(signed).toMatchObject({ method: "GET", expires_at: 1_800_000_000_000 + 15 * 60_000 });
    expect(signed.url.startsWith(`${s.url}/v1/signed/`)).toBe(true);
    const download = await fetch(signed.url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("a,b\n1,2\n");

    const upload = await ok("storage_sign", {
      primitive: "store",
      action: "presign",
      key: "upload.txt",
      method: "PUT",
      content_type: "text/plain",
    });
    expect(upload).toMatchObject({ method: "PUT", headers: { "Content-Type": "text/plain" } });
    const put = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: "sent" });
    expect(put.status).toBeLessThan(300);
    expect((await ok("storage_read", { primitive: "store", key: "upload.txt" })).content.text).toBe("sent");

    const revoked = await ok("storage_sign", { primitive: "store", action: "revoke" });
    expect(typeof revoked.epoch).toBe("number");
    expect((await fetch(signed.url)).status).toBe(403);
  });

  it("storage_sign with max_uses, max_size and if_none_match: the URL's limits hold", async () => {
    const { s, client, ok } = await withStore("storage");
    const upload = await ok("storage_sign", {
      primitive: "store",
      key: "once.txt",
      method: "PUT",
      max_size: 4,
      max_uses: 1,
      if_none_match: "*",
    });
    expect(upload).toMatchObject({ method: "PUT", headers: { "If-None-Match": "*" }, max_uses: 1 });
    const tooBig = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: "12345" });
    expect(tooBig.status).toBe(413);
    expect((await fetch(upload.url, { method: "PUT", headers: upload.headers, body: "1234" })).status).toBe(200);
    expect((await fetch(upload.url, { method: "PUT", headers: upload.headers, body: "1" })).status).toBe(403);

    const download = await ok("storage_sign", { primitive: "store", key: "once.txt", max_uses: 2 });
    expect(download.max_uses).toBe(2);
    for (let i = 0; i < 2; i++) expect(await (await fetch(download.url)).text()).toBe("1234");
    expect((await fetch(download.url)).status).toBe(403);

    const zero = await s.call(client, "storage_sign", { primitive: "store", key: "once.txt", max_uses: 0 });
    expect(zero).toMatchObject({ isError: true, data: { error: { code: "invalid_request" } } });
  });
});
