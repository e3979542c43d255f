import { describe, expect, it } from "vitest";
import { ENTRY_FIELDS, paths, withFs } from "./fs-helpers.js";
import { pattern, sha256 } from "./storage-helpers.js";

const T0 = 1_800_000_000_000;

describe("fs: write and read files", () => {
  it("writes a file (201), reads its bytes back with type, length, etag and nosniff, and overwrites it (200)", async () => {
    const { put, get } = await withFs();
    const created = await put("notes/today.md", "# hello\n");
    expect(created.status).toBe(201);
    expect(Object.keys(created.json).sort()).toEqual(ENTRY_FIELDS);
    expect(created.json).toEqual({
      path: "/notes/today.md",
      name: "today.md",
      type: "file",
      size: 8,
      mode: "644",
      mtime: T0,
      etag: `"${sha256(Buffer.from("# hello\n"))}"`,
    });
    const read = await get("notes/today.md");
    expect(read.status).toBe(200);
    expect(read.bytes.toString()).toBe("# hello\n");
    expect(read.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(read.headers.get("content-length")).toBe("8");
    expect(read.headers.get("etag")).toBe(created.json.etag);
    expect(read.headers.get("x-content-type-options")).toBe("nosniff");
    expect(read.headers.get("content-security-policy")).toBe("sandbox");
    expect(read.headers.get("x-service-mode")).toBe("644");

    const replaced = await put("notes/today.md", "second");
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({ path: "/notes/today.md", size: 6 });
    expect((await get("notes/today.md")).bytes.toString()).toBe("second");
  });

  it("guesses Content-Type from the extension and falls back to octet-stream", async () => {
    const { put, get } = await withFs();
    const cases: [string, string][] = [
      ["a.json", "application/json; charset=utf-8"],
      ["b.PNG", "image/png"],
      ["c.html", "text/html; charset=utf-8"],
      ["d.txt", "text/plain; charset=utf-8"],
      ["noext", "application/octet-stream"],
      [".hidden", "application/octet-stream"],
      ["e.unknownext", "application/octet-stream"],
    ];
    for (const [name] of cases) expect((await put(name, "x")).status).toBe(201);
    for (const [name, type] of cases) expect((await get(name)).headers.get("content-type"), name).toBe(type);
  });

  it("keeps binary bytes exactly, inline (64 KiB) and as a blob (64 KiB + 1), and answers HEAD without a body", async () => {
    const { put, get } = await withFs();
    for (const size of [0, 1, 64 * 1024, 64 * 1024 + 1, 300 * 1024]) {
      const bytes = pattern(size, size % 7);
      const res = await put(`bin/${size}.bin`, bytes);
      expect(res.status).toBe(201);
      expect(res.json.etag).toBe(`"${sha256(bytes)}"`);
      const back = await get(`bin/${size}.bin`);
      expect(back.bytes.equals(bytes), `size ${size}`).toBe(true);
      const head = await get(`bin/${size}.bin`, "", "HEAD");
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(String(size));
      expect(head.bytes.length).toBe(0);
    }
  });

  it("answers 404 not_found naming the path for a missing file, directory or stat", async () => {
    const { get, put } = await withFs();
    await put("dir/a.txt", "a");
    for (const [path, query] of [
      ["missing.txt", ""],
      ["dir/missing", "?stat=1"],
      ["nodir/x", "?list=1"],
    ] as const) {
      const res = await get(path, query);
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("not_found");
      expect(res.json.error.message).toContain(`/${path}`);
    }
  });
});

describe("fs: directories, listings and stat", () => {
  it("creates parents on write, lists direct children by name, and the whole subtree with recursive=1", async () => {
    const { put, get, clock } = await withFs();
    await put("src/b.ts", "b");
    await put("src/a.ts", "a");
    clock.advance(1000);
    await put("src/lib/deep/x.ts", "x");
    await put("README.md", "readme");

    const root = await get("");
    expect(root.status).toBe(200);
    expect(root.json.truncated).toBe(false);
    expect(paths(root)).toEqual(["/README.md", "/src"]);
    const dir = root.json.data[1];
    expect(Object.keys(dir).sort()).toEqual(ENTRY_FIELDS);
    expect(dir).toMatchObject({ path: "/src", name: "src", type: "dir", size: 0, mode: "755", etag: null });
    // A directory's mtime moves when an entry is added to it.
    expect(dir.mtime).toBe(T0 + 1000);

    expect(paths(await get("src"))).toEqual(["/src/a.ts", "/src/b.ts", "/src/lib"]);
    expect(paths(await get("src/"))).toEqual(["/src/a.ts", "/src/b.ts", "/src/lib"]);
    expect(paths(await get("src", "?recursive=1"))).toEqual([
      "/src/a.ts",
      "/src/b.ts",
      "/src/lib",
      "/src/lib/deep",
      "/src/lib/deep/x.ts",
    ]);
    expect(paths(await get("", "?recursive=true"))).toHaveLength(7);
    const head = await get("", "", "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toContain("application/json");
    expect(head.bytes.length).toBe(0);
    expect(paths(await get("src/lib/deep"))).toEqual(["/src/lib/deep/x.ts"]);
  });

  it("stat=1 gives the entry itself, for a file, a directory and the root; list=1 on a file lists the file", async () => {
    const { put, get } = await withFs();
    await put("docs/guide.txt", "guide");
    const file = await get("docs/guide.txt", "?stat=1");
    expect(file.status).toBe(200);
    expect(file.json).toMatchObject({ path: "/docs/guide.txt", type: "file", size: 5, mode: "644" });
    expect(file.headers.get("content-type")).toContain("application/json");
    expect((await get("docs", "?stat=1")).json).toMatchObject({ path: "/docs", type: "dir", etag: null });
    expect((await get("", "?stat=1")).json).toMatchObject({ path: "/", name: "", type: "dir", mode: "755" });
    const listed = await get("docs/guide.txt", "?list=1");
    expect(listed.json.data).toEqual([file.json]);
    expect(paths(await get("docs", "?list=1"))).toEqual(["/docs/guide.txt"]);
  });

  it("normalises paths: repeated slashes, '.' and '..' inside the tree name the same entry", async () => {
    const { put, get, raw } = await withFs();
    await put("a/b/c.txt", "c");
    for (const rest of ["a//b/c.txt", "a/./b/c.txt", "a/b/../b/c.txt", "./a/b/c.txt", "a/b/c.txt/"]) {
      const res = await raw("GET", rest);
      expect(res.status, rest).toBe(200);
      expect(res.body.toString(), rest).toBe("c");
    }
    expect((await get("a/b/c.txt", "?stat=1")).json.path).toBe("/a/b/c.txt");
  });

  it("rejects unknown query parameters with 400 naming them", async () => {
    const { get, put } = await withFs();
    await put("a.txt", "a");
    const res = await get("a.txt", "?sta=1");
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_request");
    expect(res.json.error.message).toContain("sta");
  });
});

describe("fs: modes", () => {
  it("sets the mode from X-Service-Mode (with or without a leading 0), keeps it on overwrite, and gives defaults", async () => {
    const { put, get, api, base } = await withFs();
    expect((await put("run.sh", "#!/bin/sh", { "x-service-mode": "0755" })).json.mode).toBe("755");
    expect((await put("secret.txt", "s", { "x-service-mode": "600" })).json.mode).toBe("600");
    expect((await put("plain.txt", "p")).json.mode).toBe("644");
    // Overwriting without the header keeps the mode; with it, changes it.
    expect((await put("run.sh", "#!/bin/bash")).json.mode).toBe("755");
    expect((await put("run.sh", "#!/bin/bash", { "x-service-mode": "700" })).json.mode).toBe("700");
    expect((await get("run.sh")).headers.get("x-service-mode")).toBe("700");
    expect((await get("secret.txt", "?stat=1")).json.mode).toBe("600");
    const made = await api("POST", `${base}/mkdir`, { path: "/made" });
    expect(made.body.mode).toBe("755");
  });

  it("answers 400 invalid_request to a malformed X-Service-Mode and writes nothing", async () => {
    const { put, get } = await withFs();
    for (const mode of ["", "8", "999", "rwxr-xr-x", "07555", "0x1ff", "64", "+644"]) {
      const res = await put("m.txt", "x", { "x-service-mode": mode });
      expect(res.status, mode).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
      expect(res.json.error.message).toContain("mode");
    }
    expect((await get("m.txt")).status).toBe(404);
  });
});
