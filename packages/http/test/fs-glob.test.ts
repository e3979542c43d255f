import { describe, expect, it } from "vitest";
import { type FsServer, withFs } from "./fs-helpers.js";

const FILES = [
  "README.md",
  ".env",
  "src/index.ts",
  "src/util.ts",
  "src/lib/a.ts",
  "src/lib/b.js",
  "src/lib/deep/c.ts",
  "docs/guide.md",
  "docs/api/ref.md",
  "test/a.test.ts",
  "data/file1.csv",
  "data/file2.csv",
  "data/file10.csv",
  "weird[1].txt",
];

async function seeded(): Promise<FsServer> {
  const server = await withFs();
  for (const path of FILES) expect((await server.put(path, `contents of ${path}`)).status).toBe(201);
  return server;
}

const glob = (server: FsServer, pattern: string, extra = "") =>
  server.api("GET", `${server.base}/glob?pattern=${encodeURIComponent(pattern)}${extra}`);

describe("fs: glob", () => {
  it("matches *, **, ?, classes and braces, sorted by path", async () => {
    const server = await seeded();
    const cases: [string, string[]][] = [
      ["*.md", ["/README.md"]],
      ["**/*.md", ["/README.md", "/docs/api/ref.md", "/docs/guide.md"]],
      ["src/*.ts", ["/src/index.ts", "/src/util.ts"]],
      ["src/**/*.ts", ["/src/index.ts", "/src/lib/a.ts", "/src/lib/deep/c.ts", "/src/util.ts"]],
      ["/src/lib/?.ts", ["/src/lib/a.ts"]],
      ["data/file?.csv", ["/data/file1.csv", "/data/file2.csv"]],
      ["data/file[12].csv", ["/data/file1.csv", "/data/file2.csv"]],
      ["data/file[!1].csv", ["/data/file2.csv"]],
      ["data/file[^2].csv", ["/data/file1.csv"]],
      ["data/file[0-9][0-9].csv", ["/data/file10.csv"]],
      [
        "{src,test}/**/*.ts",
        ["/src/index.ts", "/src/lib/a.ts", "/src/lib/deep/c.ts", "/src/util.ts", "/test/a.test.ts"],
      ],
      ["**/*.{md,js}", ["/README.md", "/docs/api/ref.md", "/docs/guide.md", "/src/lib/b.js"]],
      ["{docs/{api,nope}/*,src/lib/b.*}", ["/docs/api/ref.md", "/src/lib/b.js"]],
      ["docs/*", ["/docs/api", "/docs/guide.md"]],
      ["*", ["/.env", "/README.md", "/data", "/docs", "/src", "/test", "/weird[1].txt"]],
      ["weird\\[1\\].txt", ["/weird[1].txt"]],
      ["src/lib/**", ["/src/lib", "/src/lib/a.ts", "/src/lib/b.js", "/src/lib/deep", "/src/lib/deep/c.ts"]],
      ["**/deep/**/*.ts", ["/src/lib/deep/c.ts"]],
      ["nothing/**", []],
      ["*.MD", []],
    ];
    for (const [pattern, expected] of cases) {
      const res = await glob(server, pattern);
      expect(res.status, pattern).toBe(200);
      expect(res.body, pattern).toEqual({ data: expected });
    }
  });

  it("stops at limit (default 100, max 1000) and refuses limits out of range", async () => {
    const server = await seeded();
    const all = await glob(server, "**");
    expect(all.body.data).toHaveLength(FILES.length + 7); // the files and their 7 directories
    expect((await glob(server, "**", "&limit=3")).body.data).toEqual(all.body.data.slice(0, 3));
    for (const limit of ["0", "1001", "x"]) {
      const res = await glob(server, "**", `&limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(res.body.error.message).toContain("limit");
    }
    for (let i = 0; i < 110; i++) await server.put(`many/f${String(i).padStart(3, "0")}`, "");
    expect((await glob(server, "many/*")).body.data).toHaveLength(100);
    expect((await glob(server, "many/*", "&limit=1000")).body.data).toHaveLength(110);
  });

  it("answers 400 invalid_request to malformed patterns", async () => {
    const server = await seeded();
    for (const pattern of ["", "src/[abc", "{a,b", "a}", "[z-a]"]) {
      const res = await glob(server, pattern);
      expect(res.status, pattern).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toContain("pattern");
    }
    const missing = await server.api("GET", `${server.base}/glob`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("pattern");
    const many = await glob(server, "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}");
    expect(many.status).toBe(400);
    expect(many.body.error.message).toContain("braces");
  });

  it("answers patterns that make a regular expression backtrack", async () => {
    // A backtracking matcher needs on the order of 200^40 steps for these: it would never
    // finish within the test's timeout, so answering at all is the behaviour under test.
    const server = await withFs();
    await server.put(`dir/${"a".repeat(200)}`, "x");
    const res = await glob(server, `dir/${"*a".repeat(40)}*b`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect((await glob(server, `**/${"*a".repeat(40)}*`)).body.data).toEqual([`/dir/${"a".repeat(200)}`]);
  });
});
