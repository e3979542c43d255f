import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { paths, withFs } from "./fs-helpers.js";
import { blobFiles, pattern, sha256 } from "./storage-helpers.js";

const KiB = 1024;

/** Count and total bytes of the blob files under `<dataDir>/blobs`. */
function blobUsage(dataDir: string): { count: number; bytes: number } {
  const files = blobFiles(dataDir);
  const bytes = files.reduce((n, hash) => n + statSync(join(dataDir, "blobs", hash.slice(0, 2), hash)).size, 0);
  return { count: files.length, bytes };
}

describe("fs: forks", () => {
  it("copies a directory tree; files over 64 KiB share their blob, so the blob store does not grow", async () => {
    const { put, get, api, base, dataDir } = await withFs();
    const big1 = pattern(200 * KiB, 1);
    const big2 = pattern(64 * KiB + 1, 2);
    await put("proj/big1.bin", big1);
    await put("proj/nested/big2.bin", big2);
    await put("proj/small.txt", "small text", { "x-service-mode": "600" });
    await api("POST", `${base}/mkdir`, { path: "proj/empty" });
    const before = blobUsage(dataDir);
    expect(before.count).toBe(2);
    const sizeBefore = (await api("GET", `${base}/stats`)).body.size_bytes;

    const res = await api("POST", `${base}/forks`, { from: "proj", to: "experiments/proj-copy" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ path: "/experiments/proj-copy", files: 3 });
    expect(blobUsage(dataDir)).toEqual(before);

    expect(paths(await get("experiments/proj-copy", "?recursive=1"))).toEqual([
      "/experiments/proj-copy/big1.bin",
      "/experiments/proj-copy/empty",
      "/experiments/proj-copy/nested",
      "/experiments/proj-copy/nested/big2.bin",
      "/experiments/proj-copy/small.txt",
    ]);
    expect((await get("experiments/proj-copy/big1.bin")).bytes.equals(big1)).toBe(true);
    expect((await get("experiments/proj-copy/nested/big2.bin")).bytes.equals(big2)).toBe(true);
    const small = await get("experiments/proj-copy/small.txt", "?stat=1");
    expect(small.json).toMatchObject({ mode: "600", size: 10, etag: `"${sha256(Buffer.from("small text"))}"` });
    const stats = (await api("GET", `${base}/stats`)).body;
    expect(stats.items).toBe(6);
    // A shared blob is counted once in size_bytes.
    expect(stats.size_bytes - sizeBefore).toBeLessThan(64 * KiB);
  });

  it("keeps the fork and the source independent", async () => {
    const { put, get, api, base, engine, dataDir } = await withFs();
    const big = pattern(100 * KiB, 3);
    await put("src/big.bin", big);
    await put("src/a.txt", "source a");
    await api("POST", `${base}/forks`, { from: "src", to: "fork" });
    await put("fork/a.txt", "changed in fork");
    await put("fork/new.txt", "only in fork");
    expect((await get("src/a.txt")).bytes.toString()).toBe("source a");
    expect((await get("src/new.txt")).status).toBe(404);

    // Deleting the source keeps the shared blob alive for the fork, even through collection.
    await api("DELETE", `${base}/files/src?recursive=1`);
    await engine.services.blobCollector.collect(0);
    expect(blobFiles(dataDir)).toEqual([sha256(big)]);
    expect((await get("fork/big.bin")).bytes.equals(big)).toBe(true);
    // Once nothing names it, collection removes it.
    await api("DELETE", `${base}/files/fork?recursive=1`);
    await engine.services.blobCollector.collect(0);
    expect(blobFiles(dataDir)).toEqual([]);
  });

  it("names the copy <from>-fork-<6 chars> by default, and forks a single file too", async () => {
    const { put, get, api, base } = await withFs();
    await put("work/a.txt", "a");
    const res = await api("POST", `${base}/forks`, { from: "/work" });
    expect(res.status).toBe(201);
    expect(res.body.path).toMatch(/^\/work-fork-[0-9a-z]{6}$/);
    expect(res.body.files).toBe(1);
    expect((await get(`${res.body.path.slice(1)}/a.txt`)).bytes.toString()).toBe("a");
    const file = await api("POST", `${base}/forks`, { from: "work/a.txt", to: "b.txt" });
    expect(file.status).toBe(201);
    expect(file.body).toEqual({ path: "/b.txt", files: 1 });
  });

  it("makes the copies searchable", async () => {
    const { put, api, base } = await withFs();
    await put("docs/a.md", "the secret ingredient");
    await api("POST", `${base}/forks`, { from: "docs", to: "docs-v2" });
    const res = await api("GET", `${base}/search?q=ingredient`);
    expect((res.body.data as { path: string }[]).map((h) => h.path).sort()).toEqual(["/docs-v2/a.md", "/docs/a.md"]);
    await put("docs-v2/a.md", "rewritten");
    const after = await api("GET", `${base}/search?q=ingredient`);
    expect(after.body.data.map((h: { path: string }) => h.path)).toEqual(["/docs/a.md"]);
  });

  it("answers 409 fs_conflict when the target exists or a file is above it, 404 for a missing source, 400 inside itself", async () => {
    const { put, api, base } = await withFs();
    await put("src/a.txt", "a");
    await put("taken/x.txt", "x");
    await put("file.txt", "f");
    for (const to of ["taken", "file.txt", "file.txt/below"]) {
      const res = await api("POST", `${base}/forks`, { from: "src", to });
      expect(res.status, to).toBe(409);
      expect(res.body.error.code).toBe("fs_conflict");
    }
    const missing = await api("POST", `${base}/forks`, { from: "nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("/nope");
    for (const body of [{ from: "src", to: "src/inner" }, { from: "src", to: "src" }, { from: "/" }]) {
      const res = await api("POST", `${base}/forks`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
    expect((await api("POST", `${base}/forks`, {})).body.error.message).toContain("from");
  });
});
