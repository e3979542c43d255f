import { describe, expect, it } from "vitest";
import { paths, withFs } from "./fs-helpers.js";

const expectConflict = (res: { status: number; body: any }, text?: string) => {
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe("fs_conflict");
  if (text !== undefined) expect(res.body.error.message).toContain(text);
};

describe("fs: delete", () => {
  it("deletes a file (204), then answers 404 not_found naming the path", async () => {
    const { put, get, api, base } = await withFs();
    await put("a/b.txt", "b");
    const res = await api("DELETE", `${base}/files/a/b.txt`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await get("a/b.txt")).status).toBe(404);
    // The now-empty directory stays.
    expect((await get("a", "?stat=1")).json.type).toBe("dir");
    const again = await api("DELETE", `${base}/files/a/b.txt`);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: "not_found", message: "path '/a/b.txt' not found" });
  });

  it("deletes an empty directory, refuses a non-empty one with 409 fs_conflict, and takes it all with recursive=1", async () => {
    const { put, get, api, base } = await withFs();
    await api("POST", `${base}/mkdir`, { path: "empty" });
    expect((await api("DELETE", `${base}/files/empty`)).status).toBe(204);
    await put("full/x.txt", "x");
    await put("full/sub/y.txt", "y");
    await put("fullness.txt", "sibling with a shared prefix");
    expectConflict(await api("DELETE", `${base}/files/full`), "not empty");
    expectConflict(await api("DELETE", `${base}/files/full?recursive=0`));
    expect((await get("full/sub/y.txt")).status).toBe(200);
    expect((await api("DELETE", `${base}/files/full?recursive=1`)).status).toBe(204);
    for (const path of ["full", "full/x.txt", "full/sub", "full/sub/y.txt"]) expect((await get(path)).status).toBe(404);
    expect(paths(await get(""))).toEqual(["/fullness.txt"]);
    expect((await api("GET", `${base}/stats`)).body.items).toBe(1);
  });

  it("refuses to delete the root with 400", async () => {
    const { api, base } = await withFs();
    for (const url of [`${base}/files/`, `${base}/files/.`, `${base}/files/?recursive=1`]) {
      const res = await api("DELETE", url);
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
  });
});

describe("fs: mkdir", () => {
  it("makes a directory with its parents (201), is idempotent on an existing one (200)", async () => {
    const { get, api, base } = await withFs();
    const made = await api("POST", `${base}/mkdir`, { path: "/a/b/c" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ path: "/a/b/c", name: "c", type: "dir", size: 0, etag: null });
    expect(paths(await get("", "?recursive=1"))).toEqual(["/a", "/a/b", "/a/b/c"]);
    const again = await api("POST", `${base}/mkdir`, { path: "a/b/c/" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(made.body);
    expect((await api("POST", `${base}/mkdir`, { path: "a" })).status).toBe(200);
    expect((await api("POST", `${base}/mkdir`, { path: "/" })).status).toBe(200);
  });

  it("answers 409 fs_conflict when a file is at the path or above it, and a PUT over a directory likewise", async () => {
    const { put, api, base } = await withFs();
    await put("f.txt", "f");
    expectConflict(await api("POST", `${base}/mkdir`, { path: "f.txt" }), "'/f.txt' is a file");
    expectConflict(await api("POST", `${base}/mkdir`, { path: "f.txt/sub" }), "'/f.txt' is a file");
    const over = await put("f.txt/inner.txt", "x");
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({ code: "fs_conflict", message: "'/f.txt' is a file" });
    await api("POST", `${base}/mkdir`, { path: "d" });
    const onDir = await put("d", "x");
    expect(onDir.status).toBe(409);
    expect(onDir.json.error.message).toBe("'/d' is a directory");
    const onRoot = await put("", "x");
    expect(onRoot.status).toBe(409);
    expect(onRoot.json.error).toMatchObject({ code: "fs_conflict", message: "'/' is a directory" });
  });

  it("validates the body: path required, unknown fields named", async () => {
    const { api, base } = await withFs();
    const missing = await api("POST", `${base}/mkdir`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("path");
    const extra = await api("POST", `${base}/mkdir`, { path: "x", mode: "700" });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain("mode");
  });
});

describe("fs: move", () => {
  it("renames a file, creating the target's parents, and keeps its bytes, mode and mtime", async () => {
    const { put, get, api, base, clock } = await withFs();
    const written = await put("old/name.txt", "payload", { "x-service-mode": "600" });
    clock.advance(5000);
    const res = await api("POST", `${base}/move`, { from: "old/name.txt", to: "new/place/renamed.txt" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      path: "/new/place/renamed.txt",
      name: "renamed.txt",
      type: "file",
      size: 7,
      mode: "600",
      mtime: written.json.mtime,
      etag: written.json.etag,
    });
    expect((await get("new/place/renamed.txt")).bytes.toString()).toBe("payload");
    expect((await get("old/name.txt")).status).toBe(404);
    expect(paths(await get("old"))).toEqual([]);
  });

  it("moves a whole directory tree, and listings and stats follow", async () => {
    const { put, get, api, base } = await withFs();
    await put("proj/a.txt", "a");
    await put("proj/sub/b.txt", "b");
    await put("proj2/keep.txt", "not part of proj");
    const res = await api("POST", `${base}/move`, { from: "/proj", to: "/archive/proj-2024" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ path: "/archive/proj-2024", type: "dir" });
    expect(paths(await get("archive", "?recursive=1"))).toEqual([
      "/archive/proj-2024",
      "/archive/proj-2024/a.txt",
      "/archive/proj-2024/sub",
      "/archive/proj-2024/sub/b.txt",
    ]);
    expect(paths(await get("archive/proj-2024/sub"))).toEqual(["/archive/proj-2024/sub/b.txt"]);
    expect((await get("archive/proj-2024/sub/b.txt")).bytes.toString()).toBe("b");
    expect((await get("proj")).status).toBe(404);
    expect((await get("proj2/keep.txt")).status).toBe(200);
    expect((await api("GET", `${base}/stats`)).body.items).toBe(3);
  });

  it("answers 409 fs_conflict for an existing target unless overwrite, which replaces a file with a file", async () => {
    const { put, get, api, base } = await withFs();
    await put("a.txt", "A");
    await put("b.txt", "B");
    expectConflict(await api("POST", `${base}/move`, { from: "a.txt", to: "b.txt" }), "already exists");
    expect((await get("b.txt")).bytes.toString()).toBe("B");
    const res = await api("POST", `${base}/move`, { from: "a.txt", to: "b.txt", overwrite: true });
    expect(res.status).toBe(200);
    expect((await get("b.txt")).bytes.toString()).toBe("A");
    expect((await get("a.txt")).status).toBe(404);
  });

  it("with overwrite replaces an empty directory by a directory, but never a non-empty one or another kind", async () => {
    const { put, get, api, base } = await withFs();
    await put("src/x.txt", "x");
    await api("POST", `${base}/mkdir`, { path: "empty" });
    await put("full/y.txt", "y");
    await put("file.txt", "f");
    expectConflict(await api("POST", `${base}/move`, { from: "src", to: "full", overwrite: true }), "not empty");
    expectConflict(await api("POST", `${base}/move`, { from: "src", to: "file.txt", overwrite: true }), "is a file");
    expectConflict(await api("POST", `${base}/move`, { from: "file.txt", to: "empty", overwrite: true }), "directory");
    const res = await api("POST", `${base}/move`, { from: "src", to: "empty", overwrite: true });
    expect(res.status).toBe(200);
    expect((await get("empty/x.txt")).bytes.toString()).toBe("x");
  });

  it("answers 409 when a file is in the way above the target, 404 for a missing source, 400 for a move into itself", async () => {
    const { put, api, base } = await withFs();
    await put("dir/a.txt", "a");
    await put("blocker", "file");
    expectConflict(
      await api("POST", `${base}/move`, { from: "dir/a.txt", to: "blocker/a.txt" }),
      "'/blocker' is a file",
    );
    const missing = await api("POST", `${base}/move`, { from: "nope", to: "x" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("/nope");
    for (const to of ["dir/inner", "/dir/x/y"]) {
      const inside = await api("POST", `${base}/move`, { from: "dir", to });
      expect(inside.status).toBe(400);
      expect(inside.body.error.code).toBe("invalid_request");
    }
    expect((await api("POST", `${base}/move`, { from: "/", to: "/x" })).status).toBe(400);
    expectConflict(await api("POST", `${base}/move`, { from: "dir", to: "/", overwrite: true }));
    // Moving onto itself changes nothing.
    expect((await api("POST", `${base}/move`, { from: "dir/a.txt", to: "dir/./a.txt" })).body.path).toBe("/dir/a.txt");
  });
});
