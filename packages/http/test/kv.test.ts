import { withKv } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";

const ENTRY_FIELDS = ["created_at", "encoding", "expires_at", "key", "updated_at", "value", "version"];

describe("kv: get and set", () => {
  it("stores JSON values and returns KvEntry exactly", async () => {
    const { api, base, clock } = await withKv();
    const put = await api("PUT", `${base}/keys/user:1`, { value: { name: "Ada", tags: ["x"] } });
    expect(put.status).toBe(200);
    expect(Object.keys(put.body).sort()).toEqual(ENTRY_FIELDS);
    expect(put.body).toMatchObject({
      key: "user:1",
      value: { name: "Ada", tags: ["x"] },
      encoding: "json",
      version: 1,
      expires_at: null,
    });
    clock.advance(1000);
    const again = await api("PUT", `${base}/keys/user:1`, { value: 42 });
    expect(again.body).toMatchObject({ version: 2, value: 42, created_at: put.body.created_at });
    expect(again.body.updated_at).toBe(put.body.updated_at + 1000);
    const get = await api("GET", `${base}/keys/user:1`);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(again.body);
  });

  it("accepts null as a value but requires the field", async () => {
    const { api, base } = await withKv();
    const put = await api("PUT", `${base}/keys/n`, { value: null });
    expect(put.status).toBe(200);
    expect((await api("GET", `${base}/keys/n`)).body).toMatchObject({ value: null, encoding: "json" });
    const missing = await api("PUT", `${base}/keys/n`, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: { code: "invalid_request", message: "value: required" } });
  });

  it("keeps keys with slashes, spaces and unicode", async () => {
    const { api, base } = await withKv();
    for (const key of ["a/b/c", "with space", "ünï/cødé", "q?x=1#h", "100%"]) {
      const path = key.split("/").map(encodeURIComponent).join("/");
      expect((await api("PUT", `${base}/keys/${path}`, { value: key })).status).toBe(200);
      expect((await api("GET", `${base}/keys/${path}`)).body).toMatchObject({ key, value: key });
    }
  });

  it("answers 404 not_found naming a missing key", async () => {
    const { api, base } = await withKv();
    const res = await api("GET", `${base}/keys/nope`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect(res.body.error.message).toContain("nope");
  });

  it("stores bytes as base64 and rejects bad base64", async () => {
    const { api, base } = await withKv();
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const put = await api("PUT", `${base}/keys/bin`, { value: bytes.toString("base64"), encoding: "bytes" });
    expect(put.body).toMatchObject({ encoding: "bytes", value: bytes.toString("base64") });
    const get = await api("GET", `${base}/keys/bin`);
    expect(Buffer.from(get.body.value, "base64")).toEqual(bytes);
    const bad = await api("PUT", `${base}/keys/bin`, { value: "not base64!", encoding: "bytes" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("base64");
    expect((await api("PUT", `${base}/keys/bin`, { value: 12, encoding: "bytes" })).status).toBe(400);
    expect((await api("PUT", `${base}/keys/bin`, { value: "x", encoding: "text" })).status).toBe(400);
  });

  it("rejects unknown fields, non-object bodies and invalid JSON", async () => {
    const { api, base } = await withKv();
    const unknown = await api("PUT", `${base}/keys/a`, { value: 1, tll: "5s" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("tll");
    expect((await api("PUT", `${base}/keys/a`, [1, 2])).body.error).toMatchObject({ code: "invalid_request" });
    const broken = await api("PUT", `${base}/keys/a`, '{"value": ');
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe("invalid_request");
    expect(broken.body.error.message).toContain("JSON");
  });
});

describe("kv: limits", () => {
  it("answers 413 for a key over 1024 bytes and a value over 1 MiB", async () => {
    const { api, base } = await withKv();
    const longKey = "k".repeat(1025);
    const res = await api("PUT", `${base}/keys/${longKey}`, { value: 1 });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
    expect((await api("PUT", `${base}/keys/${"k".repeat(1024)}`, { value: 1 })).status).toBe(200);
    const big = await api("PUT", `${base}/keys/big`, { value: "x".repeat(1024 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.error.message).toContain("value");
    const bigBytes = await api("PUT", `${base}/keys/big`, {
      value: Buffer.alloc(1024 * 1024 + 1).toString("base64"),
      encoding: "bytes",
    });
    expect(bigBytes.status).toBe(413);
    const fits = await api("PUT", `${base}/keys/big`, {
      value: Buffer.alloc(1024 * 1024).toString("base64"),
      encoding: "bytes",
    });
    expect(fits.status).toBe(200);
    expect((await api("GET", `${base}/keys/nothing-stored-by-failures`)).status).toBe(404);
  });

  it("rejects empty keys and control characters", async () => {
    const { api, base } = await withKv();
    expect((await api("GET", `${base}/keys/`)).status).toBe(400);
    expect((await api("PUT", `${base}/keys/a%01b`, { value: 1 })).status).toBe(400);
    expect((await api("POST", `${base}/mget`, { keys: ["ok", "bad\n"] })).status).toBe(400);
  });
});

describe("kv: TTL", () => {
  it("treats an expired key as missing everywhere", async () => {
    const { api, base, clock } = await withKv();
    const put = await api("PUT", `${base}/keys/session`, { value: "s", ttl: "10s" });
    expect(put.body.expires_at).toBe(clock.now() + 10_000);
    await api("PUT", `${base}/keys/forever`, { value: 1 });
    clock.advance(9_999);
    expect((await api("GET", `${base}/keys/session`)).status).toBe(200);
    clock.advance(1);
    expect((await api("GET", `${base}/keys/session`)).status).toBe(404);
    expect((await api("GET", `${base}/keys`)).body.data.map((e: { key: string }) => e.key)).toEqual(["forever"]);
    expect((await api("POST", `${base}/mget`, { keys: ["session", "forever"] })).body.data[0]).toBeNull();
    expect((await api("GET", `${base}/stats`)).body.items).toBe(1);
    expect((await api("DELETE", `${base}/keys/session`)).body).toEqual({ deleted: false });
    // An expired key no longer exists for if_version either, and its version starts again.
    const recreated = await api("PUT", `${base}/keys/session`, { value: "new", if_version: 0 });
    expect(recreated.body).toMatchObject({ version: 1, value: "new" });
  });

  it("clears the expiry when set without ttl, and accepts every duration form", async () => {
    const { api, base, clock } = await withKv();
    await api("PUT", `${base}/keys/a`, { value: 1, ttl: "5m" });
    const cleared = await api("PUT", `${base}/keys/a`, { value: 2 });
    expect(cleared.body.expires_at).toBeNull();
    clock.advance(3_600_000);
    expect((await api("GET", `${base}/keys/a`)).status).toBe(200);
    for (const [ttl, ms] of [
      ["250ms", 250],
      ["30", 30_000],
      ["1h", 3_600_000],
      ["7d", 604_800_000],
    ] as const) {
      expect((await api("PUT", `${base}/keys/a`, { value: 1, ttl })).body.expires_at).toBe(clock.now() + ms);
    }
    for (const ttl of ["soon", "-5s", 30, "0s"]) {
      const res = await api("PUT", `${base}/keys/a`, { value: 1, ttl });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/^ttl:/);
    }
  });
});

describe("kv: versions and delete", () => {
  it("enforces if_version with 412, 0 meaning must not exist", async () => {
    const { api, base } = await withKv();
    expect((await api("PUT", `${base}/keys/a`, { value: 1, if_version: 0 })).body.version).toBe(1);
    const exists = await api("PUT", `${base}/keys/a`, { value: 2, if_version: 0 });
    expect(exists.status).toBe(412);
    expect(exists.body.error.code).toBe("precondition_failed");
    expect((await api("PUT", `${base}/keys/a`, { value: 2, if_version: 5 })).status).toBe(412);
    expect((await api("PUT", `${base}/keys/a`, { value: 2, if_version: 1 })).body.version).toBe(2);
    expect((await api("GET", `${base}/keys/a`)).body.value).toBe(2);
    expect((await api("PUT", `${base}/keys/b`, { value: 1, if_version: 3 })).status).toBe(412);
    expect((await api("PUT", `${base}/keys/b`, { value: 1, if_version: -1 })).status).toBe(400);
  });

  it("deletes with an optional if_version and reports whether a key was there", async () => {
    const { api, base } = await withKv();
    await api("PUT", `${base}/keys/a`, { value: 1 });
    expect((await api("DELETE", `${base}/keys/a?if_version=9`)).status).toBe(412);
    expect((await api("GET", `${base}/keys/a`)).status).toBe(200);
    expect((await api("DELETE", `${base}/keys/a?if_version=1`)).body).toEqual({ deleted: true });
    expect((await api("DELETE", `${base}/keys/a`)).body).toEqual({ deleted: false });
    expect((await api("DELETE", `${base}/keys/a?if_version=abc`)).status).toBe(400);
  });
});

describe("kv: listing", () => {
  it("lists keys in order with prefix, limit and cursor, omitting values unless asked", async () => {
    const { api, base } = await withKv();
    const keys = ["b/2", "a/1", "b/1", "c", "b/10", "ba"];
    for (const key of keys) await api("PUT", `${base}/keys/${key}`, { value: key });
    const all = await api("GET", `${base}/keys`);
    expect(all.body.data.map((e: { key: string }) => e.key)).toEqual([...keys].sort());
    expect(all.body.next_cursor).toBeNull();
    expect(all.body.data.every((e: object) => !("value" in e))).toBe(true);

    const withValues = await api("GET", `${base}/keys?values=true&prefix=b/`);
    expect(withValues.body.data).toMatchObject([
      { key: "b/1", value: "b/1" },
      { key: "b/10", value: "b/10" },
      { key: "b/2", value: "b/2" },
    ]);

    const first = await api("GET", `${base}/keys?prefix=b&limit=2`);
    expect(first.body.data.map((e: { key: string }) => e.key)).toEqual(["b/1", "b/10"]);
    expect(typeof first.body.next_cursor).toBe("string");
    const second = await api("GET", `${base}/keys?prefix=b&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((e: { key: string }) => e.key)).toEqual(["b/2", "ba"]);
    expect(second.body.next_cursor).toBeNull();
  });

  it("pages 100 by default and up to 1,000, and rejects bad limits and cursors", async () => {
    const { api, base } = await withKv();
    const items = Array.from({ length: 100 }, (_, i) => ({ key: `k${String(i).padStart(4, "0")}`, value: i }));
    for (let i = 0; i < 11; i++) {
      const batch = items.map((item) => ({ ...item, key: `${i}-${item.key}` }));
      expect((await api("POST", `${base}/mset`, { items: batch })).status).toBe(200);
    }
    const page = await api("GET", `${base}/keys`);
    expect(page.body.data).toHaveLength(100);
    const big = await api("GET", `${base}/keys?limit=1000`);
    expect(big.body.data).toHaveLength(1000);
    const rest = await api("GET", `${base}/keys?limit=1000&cursor=${big.body.next_cursor}`);
    expect(rest.body.data).toHaveLength(100);
    expect(rest.body.next_cursor).toBeNull();
    expect((await api("GET", `${base}/keys?limit=1001`)).status).toBe(400);
    expect((await api("GET", `${base}/keys?limit=0`)).status).toBe(400);
    expect((await api("GET", `${base}/keys?cursor=bogus`)).body.error.code).toBe("invalid_request");
    expect((await api("GET", `${base}/keys?values=maybe`)).status).toBe(400);
  });
});

describe("kv: batches", () => {
  it("mget returns entries in request order with null for missing keys", async () => {
    const { api, base } = await withKv();
    await api("PUT", `${base}/keys/a`, { value: 1 });
    await api("PUT", `${base}/keys/c`, { value: 3 });
    const res = await api("POST", `${base}/mget`, { keys: ["c", "b", "a"] });
    expect(res.body.data.map((e: { value: number } | null) => e?.value ?? null)).toEqual([3, null, 1]);
  });

  it("mset is atomic by default: a failed if_version names the index and writes nothing", async () => {
    const { api, base } = await withKv();
    await api("PUT", `${base}/keys/taken`, { value: "old" });
    const res = await api("POST", `${base}/mset`, {
      items: [
        { key: "x", value: 1 },
        { key: "taken", value: "new", if_version: 0 },
        { key: "y", value: 2 },
      ],
    });
    expect(res.status).toBe(412);
    expect(res.body.error.code).toBe("precondition_failed");
    expect(res.body.error.message).toContain("items[1]");
    expect(
      (await api("POST", `${base}/mget`, { keys: ["x", "taken", "y"] })).body.data.map((e: any) => e?.value ?? null),
    ).toEqual([null, "old", null]);
    const tooBig = await api("POST", `${base}/mset`, {
      items: [
        { key: "x", value: 1 },
        { key: "z", value: "v".repeat(1024 * 1024 + 1) },
      ],
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.message).toContain("items[1]");
    expect((await api("GET", `${base}/keys/x`)).status).toBe(404);
  });

  it("mset with atomic:false stops at the first failure and keeps earlier items", async () => {
    const { api, base } = await withKv();
    await api("PUT", `${base}/keys/taken`, { value: "old" });
    const res = await api("POST", `${base}/mset`, {
      atomic: false,
      items: [
        { key: "x", value: 1 },
        { key: "taken", value: "new", if_version: 0 },
        { key: "y", value: 2 },
      ],
    });
    expect(res.status).toBe(412);
    expect(res.body.error.message).toContain("items[1]");
    const after = await api("POST", `${base}/mget`, { keys: ["x", "taken", "y"] });
    expect(after.body.data.map((e: any) => e?.value ?? null)).toEqual([1, "old", null]);
  });

  it("mset returns the entries and refuses more than 100 items", async () => {
    const { api, base, clock } = await withKv();
    const ok = await api("POST", `${base}/mset`, {
      items: [
        { key: "a", value: 1, ttl: "1m" },
        { key: "b", value: Buffer.from("hi").toString("base64"), encoding: "bytes" },
      ],
    });
    expect(ok.body.data).toMatchObject([
      { key: "a", value: 1, version: 1, expires_at: clock.now() + 60_000 },
      { key: "b", encoding: "bytes", value: "aGk=" },
    ]);
    const items = Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, value: i }));
    const res = await api("POST", `${base}/mset`, { items });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("items");
    expect((await api("POST", `${base}/mset`, { items: items.slice(0, 100) })).status).toBe(200);
  });

  it("mdelete returns how many keys were deleted", async () => {
    const { api, base } = await withKv();
    await api("POST", `${base}/mset`, {
      items: [
        { key: "a", value: 1 },
        { key: "b", value: 2 },
      ],
    });
    expect((await api("POST", `${base}/mdelete`, { keys: ["a", "b", "c"] })).body).toEqual({ deleted: 2 });
    expect((await api("GET", `${base}/keys`)).body.data).toEqual([]);
  });
});

describe("kv: incr", () => {
  it("increments integers, starting missing keys at 0", async () => {
    const { api, base } = await withKv();
    expect((await api("POST", `${base}/incr`, { key: "n" })).body).toMatchObject({ value: 1, version: 1 });
    expect((await api("POST", `${base}/incr`, { key: "n", by: 10 })).body).toMatchObject({ value: 11, version: 2 });
    expect((await api("POST", `${base}/incr`, { key: "n", by: -20 })).body.value).toBe(-9);
    expect((await api("POST", `${base}/incr`, { key: "n", by: 1.5 })).status).toBe(400);
  });

  it("answers 409 conflict for a value that is not an integer", async () => {
    const { api, base } = await withKv();
    await api("PUT", `${base}/keys/s`, { value: "hello" });
    await api("PUT", `${base}/keys/f`, { value: 1.5 });
    for (const key of ["s", "f"]) {
      const res = await api("POST", `${base}/incr`, { key });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("conflict");
    }
    await api("PUT", `${base}/keys/max`, { value: Number.MAX_SAFE_INTEGER });
    expect((await api("POST", `${base}/incr`, { key: "max" })).status).toBe(409);
    expect((await api("GET", `${base}/keys/s`)).body.value).toBe("hello");
  });

  it("sets the expiry with ttl and keeps an existing one without it", async () => {
    const { api, base, clock } = await withKv();
    const first = await api("POST", `${base}/incr`, { key: "rate", ttl: "1m" });
    expect(first.body.expires_at).toBe(clock.now() + 60_000);
    clock.advance(30_000);
    expect((await api("POST", `${base}/incr`, { key: "rate" })).body).toMatchObject({
      value: 2,
      expires_at: first.body.expires_at,
    });
    clock.advance(30_000);
    expect((await api("POST", `${base}/incr`, { key: "rate" })).body).toMatchObject({ value: 1, expires_at: null });
  });
});
