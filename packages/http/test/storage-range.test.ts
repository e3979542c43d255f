import { describe, expect, it } from "vitest";
import { pattern, withStorage } from "./storage-helpers.js";

// Every rule once for an object stored inline (small) and once for a blob-backed one.
const CASES = [
  { kind: "inline", size: 1000 },
  { kind: "blob-backed", size: 200 * 1024 },
] as const;

describe.each(CASES)("storage: Range on an $kind object", ({ size }) => {
  async function setup() {
    const server = await withStorage();
    const bytes = pattern(size, 5);
    const put = await server.put("obj", bytes, { "content-type": "application/x-test" });
    expect(put.status).toBe(200);
    return { ...server, bytes, etag: put.json.etag as string };
  }

  it("answers bytes=0-4 with 206, Content-Range and those bytes", async () => {
    const { get, bytes, etag } = await setup();
    const res = await get("obj", { range: "bytes=0-4" });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes 0-4/${size}`);
    expect(res.headers.get("content-length")).toBe("5");
    expect(res.headers.get("etag")).toBe(etag);
    expect(res.headers.get("content-type")).toBe("application/x-test");
    expect(res.bytes.equals(bytes.subarray(0, 5))).toBe(true);
  });

  it("answers an open range bytes=5- with the rest of the object", async () => {
    const { get, bytes } = await setup();
    const res = await get("obj", { range: "bytes=5-" });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes 5-${size - 1}/${size}`);
    expect(res.headers.get("content-length")).toBe(String(size - 5));
    expect(res.bytes.equals(bytes.subarray(5))).toBe(true);
  });

  it("answers a suffix range bytes=-3 with the last three bytes", async () => {
    const { get, bytes } = await setup();
    const res = await get("obj", { range: "bytes=-3" });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes ${size - 3}-${size - 1}/${size}`);
    expect(res.bytes.equals(bytes.subarray(size - 3))).toBe(true);
    // A suffix longer than the object is the whole object.
    const all = await get("obj", { range: `bytes=-${size + 10}` });
    expect(all.status).toBe(206);
    expect(all.headers.get("content-range")).toBe(`bytes 0-${size - 1}/${size}`);
    expect(all.bytes.equals(bytes)).toBe(true);
  });

  it("clamps an end past the size to the last byte", async () => {
    const { get, bytes } = await setup();
    const res = await get("obj", { range: `bytes=${size - 10}-${size + 5000}` });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    expect(res.headers.get("content-length")).toBe("10");
    expect(res.bytes.equals(bytes.subarray(size - 10))).toBe(true);
  });

  it("serves a range in the middle", async () => {
    const { get, bytes } = await setup();
    const start = Math.floor(size / 2) - 7;
    const res = await get("obj", { range: `bytes=${start}-${start + 99}` });
    expect(res.status).toBe(206);
    expect(res.bytes.equals(bytes.subarray(start, start + 100))).toBe(true);
  });

  it("answers 416 range_not_satisfiable with bytes */size for a start past the end", async () => {
    const { get } = await setup();
    for (const range of [`bytes=${size}-`, `bytes=${size + 100}-${size + 200}`]) {
      const res = await get("obj", { range });
      expect(res.status).toBe(416);
      expect(res.headers.get("content-range")).toBe(`bytes */${size}`);
      expect(res.json).toEqual({ error: { code: "range_not_satisfiable", message: expect.any(String) } });
    }
  });

  it("ignores malformed and multi-range headers and returns the whole object with 200", async () => {
    const { get, bytes } = await setup();
    for (const range of ["bytes=abc", "items=0-1", "bytes=0-1,3-4", "bytes=", "bytes=4-2"]) {
      const res = await get("obj", { range });
      expect(res.status, range).toBe(200);
      expect(res.headers.get("content-range"), range).toBeNull();
      expect(res.headers.get("content-length"), range).toBe(String(size));
      expect(res.bytes.equals(bytes), range).toBe(true);
    }
  });

  it("answers HEAD with a range's status and headers but no body", async () => {
    const { get } = await setup();
    const res = await get("obj", { range: "bytes=0-4" }, "HEAD");
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes 0-4/${size}`);
    expect(res.headers.get("content-length")).toBe("5");
    expect(res.bytes.length).toBe(0);
    expect((await get("obj", { range: `bytes=${size}-` }, "HEAD")).status).toBe(416);
  });

  it("prefers If-None-Match over Range: a matching ETag is 304", async () => {
    const { get, etag } = await setup();
    const res = await get("obj", { range: "bytes=0-4", "if-none-match": etag });
    expect(res.status).toBe(304);
    expect(res.bytes.length).toBe(0);
  });

  it("ignores Range with ?stat=1", async () => {
    const { api, base } = await setup();
    const res = await api("GET", `${base}/objects/obj?stat=1`, undefined, { range: "bytes=0-4" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ key: "obj", size });
  });
});

describe("storage: Range on an empty object", () => {
  it("answers 416 for any range and 200 without one", async () => {
    const { put, get } = await withStorage();
    await put("empty", Buffer.alloc(0));
    const res = await get("empty", { range: "bytes=0-" });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe("bytes */0");
    expect((await get("empty")).status).toBe(200);
  });
});
