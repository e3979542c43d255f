import { describe, expect, it } from "vitest";
import { paths, withFs } from "./fs-helpers.js";
import { tmpFiles } from "./storage-helpers.js";

const MAX_FILE_BYTES = 1024 ** 3;

describe("fs: path safety", () => {
  it("refuses '..' that climbs above the root, literal or URL-encoded, with 400 and writes nothing", async () => {
    const { raw, get } = await withFs();
    await raw("PUT", "inside/keep.txt", Buffer.from("keep"));
    const attempts = [
      "..",
      "../escape.txt",
      "../../../../etc/passwd",
      "inside/../../escape.txt",
      "%2e%2e/escape.txt",
      "%2E%2E/%2e%2e/escape.txt",
      ".%2e/escape.txt",
      "inside/%2e%2e/%2e%2e/escape.txt",
      "..%2Fescape.txt",
      "inside%2F..%2F..%2Fescape.txt",
      "%2F..%2F..%2Fescape.txt",
    ];
    for (const rest of attempts) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const res = await raw(method, rest, method === "PUT" ? Buffer.from("evil") : undefined);
        expect(res.status, `${method} ${rest}`).toBe(400);
        expect(res.json.error.code, `${method} ${rest}`).toBe("invalid_request");
        expect(res.json.error.message).toContain("above the root");
      }
    }
    expect(paths(await get("", "?recursive=1"))).toEqual(["/inside", "/inside/keep.txt"]);
  });

  it("resolves '..' that stays inside the tree, and treats encoded slashes as separators", async () => {
    const { raw, get } = await withFs();
    expect((await raw("PUT", "a/b/%2e%2e/c.txt", Buffer.from("c"))).status).toBe(201);
    expect((await raw("PUT", "a/b/../../d.txt", Buffer.from("d"))).status).toBe(201);
    expect((await raw("PUT", "x%2Fy%2Fz.txt", Buffer.from("z"))).status).toBe(201);
    expect((await raw("PUT", "//abs//olute.txt", Buffer.from("abs"))).status).toBe(201);
    expect(paths(await get("", "?recursive=1"))).toEqual([
      "/a",
      "/a/c.txt",
      "/abs",
      "/abs/olute.txt",
      "/d.txt",
      "/x",
      "/x/y",
      "/x/y/z.txt",
    ]);
    expect((await raw("GET", "x/y/../y/z.txt")).body.toString()).toBe("z");
  });

  it("refuses NUL and control characters in paths with 400", async () => {
    const { raw, get, api, base } = await withFs();
    for (const rest of [
      "a%00.txt",
      "a%00/../b.txt",
      "dir%0A/x",
      "tab%09.txt",
      "cr%0D.txt",
      "esc%1B.txt",
      "del%7F.txt",
    ]) {
      for (const method of ["GET", "PUT"]) {
        const res = await raw(method, rest, method === "PUT" ? Buffer.from("x") : undefined);
        expect(res.status, `${method} ${rest}`).toBe(400);
        expect(res.json.error.code).toBe("invalid_request");
        expect(res.json.error.message).toContain("control characters");
      }
    }
    for (const [url, body, field] of [
      ["mkdir", { path: "bad\u0000dir" }, "path"],
      ["move", { from: "a\nb", to: "c" }, "from"],
      ["move", { from: "a", to: "c\u0001" }, "to"],
      ["forks", { from: "a", to: "\u007f" }, "to"],
    ] as const) {
      const res = await api("POST", `${base}/${url}`, body);
      expect(res.status, url).toBe(400);
      expect(res.body.error.message.startsWith(`${field}:`), res.body.error.message).toBe(true);
    }
    expect(paths(await get("", "?recursive=1"))).toEqual([]);
  });

  it("refuses '..' escapes in JSON bodies, naming the field", async () => {
    const { api, base, put } = await withFs();
    await put("a.txt", "a");
    for (const [url, body, field] of [
      ["mkdir", { path: "../up" }, "path"],
      ["move", { from: "a.txt", to: "../../a.txt" }, "to"],
      ["move", { from: "../a.txt", to: "b.txt" }, "from"],
      ["forks", { from: "/../..", to: "x" }, "from"],
    ] as const) {
      const res = await api("POST", `${base}/${url}`, body);
      expect(res.status, url).toBe(400);
      expect(res.body.error.message).toBe(`${field}: '..' must not climb above the root`);
    }
    const search = await api("GET", `${base}/search?q=a&path=..`);
    expect(search.status).toBe(400);
  });

  it("allows paths up to 1,024 bytes and names up to 255 bytes, and answers 400 past them", async () => {
    const { put, get } = await withFs();
    const name = "n".repeat(255);
    const longest = [name, name, name, name].join("/"); // "/" + 1,023 = 1,024 bytes
    expect((await put(longest, "deep")).status).toBe(201);
    expect((await get(longest)).bytes.toString()).toBe("deep");
    const tooLong = await put(`${longest}/x`, "x");
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.message).toContain("1024");
    const longName = await put(`dir/${"m".repeat(256)}`, "x");
    expect(longName.status).toBe(400);
    expect(longName.json.error.message).toContain("255");
    // Names count in UTF-8 bytes: 127 × 2 + 1 = 255 fits, 128 × 2 does not.
    expect((await put(`${"é".repeat(127)}x`, "x")).status).toBe(201);
    expect((await put("é".repeat(128), "x")).status).toBe(400);
  });
});

describe("fs: file size limit", () => {
  it("answers 413 payload_too_large as soon as Content-Length is over 1 GiB, keeping nothing", async () => {
    const { raw, get, put, dataDir } = await withFs();
    await put("big.bin", "previous");
    const declared = { "content-length": MAX_FILE_BYTES + 1 };
    // The body is left unfinished: the answer must come from the declared length alone.
    const res = await raw("PUT", "big.bin", Buffer.alloc(64 * 1024), declared);
    expect(res.status).toBe(413);
    expect(res.json.error).toEqual({
      code: "payload_too_large",
      message: `file is ${MAX_FILE_BYTES + 1} bytes; the limit is ${MAX_FILE_BYTES}`,
    });
    expect((await get("big.bin")).bytes.toString()).toBe("previous");
    expect((await raw("PUT", "new/huge.bin", Buffer.alloc(1024), declared)).status).toBe(413);
    expect((await get("new")).status).toBe(404);
    expect(tmpFiles(dataDir)).toEqual([]);
  });
});
