import { isServiceError } from "@prim/wire";
import { describe, expect, it } from "vitest";
import { Glob } from "../../src/primitives/fs/glob.js";
import { ancestorsOf, isWithin, normalizePath, parentOf, subtreeBounds } from "../../src/primitives/fs/limits.js";
import { toMatchQuery } from "../../src/primitives/fs/search.js";

function fails(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isServiceError(err)) return `${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error("expected a ServiceError");
}

describe("fs paths", () => {
  it("normalises to a rooted canonical form", () => {
    expect(normalizePath("")).toBe("/");
    expect(normalizePath("/")).toBe("/");
    expect(normalizePath("a//b/./c/")).toBe("/a/b/c");
    expect(normalizePath("a/b/../c")).toBe("/a/c");
    expect(normalizePath("a/..")).toBe("/");
    expect(normalizePath("...")).toBe("/...");
    expect(normalizePath("a\\..\\b")).toBe("/a\\..\\b");
  });

  it("refuses climbing above the root and control characters, naming the field", () => {
    expect(fails(() => normalizePath("..", "to"))).toBe("invalid_request: to: '..' must not climb above the root");
    expect(fails(() => normalizePath("a/../.."))).toContain("above the root");
    expect(fails(() => normalizePath("a\u0000b"))).toContain("control characters");
    expect(fails(() => normalizePath("a\u007f"))).toContain("control characters");
  });

  it("computes parents, ancestors and subtree bounds", () => {
    expect(parentOf("/")).toBeNull();
    expect(parentOf("/a")).toBe("/");
    expect(parentOf("/a/b")).toBe("/a");
    expect(ancestorsOf("/a/b/c")).toEqual(["/a", "/a/b"]);
    expect(ancestorsOf("/a")).toEqual([]);
    expect(subtreeBounds("/")).toEqual({ lo: "/", hi: "0" });
    expect(subtreeBounds("/a")).toEqual({ lo: "/a/", hi: "/a0" });
    expect(isWithin("/a/b", "/a")).toBe(true);
    expect(isWithin("/ab", "/a")).toBe(false);
    expect(isWithin("/a", "/")).toBe(true);
  });
});

describe("fs glob", () => {
  const match = (pattern: string, path: string) => new Glob(pattern).matches(path);

  it("matches names, classes, braces and globstars", () => {
    expect(match("*.ts", "/a.ts")).toBe(true);
    expect(match("*.ts", "/src/a.ts")).toBe(false);
    expect(match("**/*.ts", "/a.ts")).toBe(true);
    expect(match("**/*.ts", "/x/y/z/a.ts")).toBe(true);
    expect(match("a/**/b", "/a/b")).toBe(true);
    expect(match("a/**/b", "/a/x/y/b")).toBe(true);
    expect(match("a/**", "/a")).toBe(true);
    expect(match("a**b", "/axxb")).toBe(true);
    expect(match("a**b", "/ax/xb")).toBe(false);
    expect(match("?", "/é")).toBe(true);
    expect(match("[a-c]x", "/bx")).toBe(true);
    expect(match("[!a-c]x", "/bx")).toBe(false);
    expect(match("[]]", "/]")).toBe(true);
    expect(match("[\\]a]", "/a")).toBe(true);
    expect(match("{a,b{c,d}}.txt", "/bd.txt")).toBe(true);
    expect(match("{a,b{c,d}}.txt", "/b.txt")).toBe(false);
    expect(match("{,x}y", "/y")).toBe(true);
    expect(match("\\*", "/*")).toBe(true);
    expect(match("\\*", "/a")).toBe(false);
    expect(match("*", "/.hidden")).toBe(true);
    expect(match("A*", "/a")).toBe(false);
  });

  it("narrows the scan to the literal directories every alternative shares", () => {
    expect(new Glob("src/lib/*.ts").base).toBe("/src/lib");
    expect(new Glob("/src/**/x").base).toBe("/src");
    expect(new Glob("{src/a,src/b}/*").base).toBe("/src");
    expect(new Glob("{src,lib}/*").base).toBe("/");
    expect(new Glob("s?c/*").base).toBe("/");
    expect(new Glob("file.txt").base).toBe("/");
  });

  it("refuses malformed patterns", () => {
    for (const pattern of ["", "[abc", "{a,b", "}", "[b-a]", "x".repeat(1025)]) {
      expect(
        fails(() => new Glob(pattern)),
        pattern,
      ).toMatch(/^invalid_request: pattern:/);
    }
  });
});

describe("fs search query", () => {
  it("quotes each word and keeps a trailing * as a prefix", () => {
    expect(toMatchQuery("hello world")).toBe('"hello" "world"');
    expect(toMatchQuery('say "hi" OR')).toBe('"say" """hi""" "OR"');
    expect(toMatchQuery("conf*")).toBe('"conf"*');
    expect(fails(() => toMatchQuery(" - ! "))).toContain("q:");
  });
});
