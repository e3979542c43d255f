import { describe, expect, it } from "vitest";
import { type FsServer, withFs } from "./fs-helpers.js";

const search = (server: FsServer, q: string, extra = "") =>
  server.api("GET", `${server.base}/search?q=${encodeURIComponent(q)}${extra}`);

const hitPaths = (res: { body: any }) => (res.body.data as { path: string }[]).map((h) => h.path).sort();

describe("fs: search", () => {
  it("finds text files by word with a snippet around the hit", async () => {
    const server = await withFs();
    await server.put("notes/meeting.md", "Agenda: discuss the quarterly budget and the hiring plan.");
    await server.put("notes/todo.txt", "buy milk\ncall the plumber");
    await server.put("src/app.ts", "export const budgetLimit = 10;");
    const res = await search(server, "budget");
    expect(res.status).toBe(200);
    expect(hitPaths(res)).toEqual(["/notes/meeting.md"]);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["path", "snippet"]);
    expect(res.body.data[0].snippet).toContain("**budget**");
    expect(res.body.data[0].snippet).toContain("quarterly");
    // Every word must appear; a trailing * matches a prefix.
    expect(hitPaths(await search(server, "call plumber"))).toEqual(["/notes/todo.txt"]);
    expect(hitPaths(await search(server, "call budget"))).toEqual([]);
    expect(hitPaths(await search(server, "budg*"))).toEqual(["/notes/meeting.md", "/src/app.ts"]);
    expect(hitPaths(await search(server, "BUDGET"))).toEqual(["/notes/meeting.md"]);
  });

  it("follows overwrites, deletes and moves", async () => {
    const server = await withFs();
    const { api, base } = server;
    await server.put("a.txt", "the original walrus");
    expect(hitPaths(await search(server, "walrus"))).toEqual(["/a.txt"]);
    await server.put("a.txt", "a replacement penguin");
    expect(hitPaths(await search(server, "walrus"))).toEqual([]);
    expect(hitPaths(await search(server, "penguin"))).toEqual(["/a.txt"]);
    await api("POST", `${base}/move`, { from: "a.txt", to: "birds/b.txt" });
    expect(hitPaths(await search(server, "penguin"))).toEqual(["/birds/b.txt"]);
    expect((await api("DELETE", `${base}/files/birds/b.txt`)).status).toBe(204);
    expect(hitPaths(await search(server, "penguin"))).toEqual([]);
    await server.put("zoo/c.txt", "another penguin");
    await api("DELETE", `${base}/files/zoo?recursive=1`);
    expect(hitPaths(await search(server, "penguin"))).toEqual([]);
    // A binary overwrite drops the text from the index.
    await server.put("d.txt", "searchable otter");
    await server.put("d.txt", Buffer.from([0x6f, 0x74, 0x74, 0x65, 0x72, 0x00, 0xff]));
    expect(hitPaths(await search(server, "otter"))).toEqual([]);
  });

  it("indexes UTF-8 text up to 1 MiB (blob-backed too), not binary or larger files", async () => {
    const server = await withFs();
    const filler = "lorem ipsum dolor sit amet ".repeat(4000); // ~108 KiB: a blob
    await server.put("big.txt", `${filler} needle-one`);
    await server.put("unicode.md", "Größenänderung café naïve needle-two");
    await server.put("binary.bin", Buffer.concat([Buffer.from("needle-three "), Buffer.from([0, 1, 2])]));
    await server.put("latin1.txt", Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x20, 0xe9, 0xff]));
    await server.put("huge.txt", `needle-four ${"x ".repeat(600 * 1024)}`);
    expect(hitPaths(await search(server, "needle-one"))).toEqual(["/big.txt"]);
    expect(hitPaths(await search(server, "needle-two"))).toEqual(["/unicode.md"]);
    expect(hitPaths(await search(server, "cafe"))).toEqual(["/unicode.md"]);
    expect(hitPaths(await search(server, "needle-three"))).toEqual([]);
    expect(hitPaths(await search(server, "needle"))).toEqual(["/big.txt", "/unicode.md"]);
    expect(hitPaths(await search(server, "needle-four"))).toEqual([]);
  });

  it("limits results to a path's subtree and to limit", async () => {
    const server = await withFs();
    for (const path of ["docs/a.md", "docs/sub/b.md", "docs2/c.md", "d.md"]) await server.put(path, "shared keyword");
    expect(hitPaths(await search(server, "keyword"))).toEqual(["/d.md", "/docs/a.md", "/docs/sub/b.md", "/docs2/c.md"]);
    expect(hitPaths(await search(server, "keyword", "&path=/docs"))).toEqual(["/docs/a.md", "/docs/sub/b.md"]);
    expect(hitPaths(await search(server, "keyword", "&path=docs/sub/b.md"))).toEqual(["/docs/sub/b.md"]);
    expect(hitPaths(await search(server, "keyword", "&path=nowhere"))).toEqual([]);
    expect((await search(server, "keyword", "&limit=2")).body.data).toHaveLength(2);
    const over = await search(server, "keyword", "&limit=201");
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain("limit");
  });

  it("takes q as plain words: FTS syntax is matched literally, and empty or wordless q is a 400", async () => {
    const server = await withFs();
    await server.put("a.txt", 'he said "quote" OR NEAR something');
    for (const q of ['"quote"', "OR NEAR(", "quote -something", "quote AND", "said)"]) {
      const res = await search(server, q);
      expect(res.status, q).toBe(200);
    }
    expect(hitPaths(await search(server, '"quote" OR'))).toEqual(["/a.txt"]);
    // Control characters separate words (a NUL ended FTS5's query string: a 500, found by fuzz).
    expect(hitPaths(await search(server, "said\u0000quote"))).toEqual(["/a.txt"]);
    expect(hitPaths(await search(server, "said\u0007nothing"))).toEqual([]);
    for (const q of ["", "  ", "!!! ---", "*", "\u0000", "\u0000\u001f"]) {
      const res = await search(server, q);
      expect(res.status, JSON.stringify(q)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain("q");
    }
  });
});
