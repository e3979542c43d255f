import { LOCAL_PRINCIPAL, type PrimitiveInfo } from "@prim/engine";
import { startServer } from "@prim/testkit/rest";
import { describe, expect, it } from "vitest";
import { createFs, fsOn, paths, withFs, withScopedFs } from "./fs-helpers.js";
import { pattern } from "./storage-helpers.js";

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** One call of every fs data route, in a fixed order, on fresh names. */
async function everyRoute(call: Call, base: string, n: number) {
  return {
    read: await call("GET", `${base}/files/seed.txt`),
    list: await call("GET", `${base}/files`),
    stat: await call("GET", `${base}/files/seed.txt?stat=1`),
    head: await call("HEAD", `${base}/files/seed.txt`),
    write: await call("PUT", `${base}/files/w${n}.txt`, "x"),
    mkdir: await call("POST", `${base}/mkdir`, { path: `d${n}` }),
    move: await call("POST", `${base}/move`, { from: `m${n}.txt`, to: `moved${n}.txt` }),
    delete: await call("DELETE", `${base}/files/del${n}.txt`),
    glob: await call("GET", `${base}/glob?pattern=*`),
    search: await call("GET", `${base}/search?q=seed`),
    fork: await call("POST", `${base}/forks`, { from: "tree", to: `fork${n}` }),
  };
}

const TOOL_OF: Record<string, string> = {
  read: "fs_read",
  list: "fs_read",
  stat: "fs_read",
  head: "fs_read",
  write: "fs_write",
  mkdir: "fs_write",
  move: "fs_write",
  delete: "fs_write",
  glob: "fs_search",
  search: "fs_search",
  fork: "fs_fork",
};

describe("fs: tool allowlist", () => {
  it("lets each fs tool reach exactly its routes, and answers 403 tool_not_allowed to the rest", async () => {
    const { as, call, put, base, api } = await withScopedFs();
    await put("seed.txt", "seed words");
    await put("tree/a.txt", "a");
    for (const [n, tool] of ["fs_read", "fs_write", "fs_search", "fs_fork"].entries()) {
      await put(`m${n}.txt`, "to move");
      await put(`del${n}.txt`, "to delete");
      as([tool]);
      const results = await everyRoute(call, base, n);
      for (const [route, res] of Object.entries(results)) {
        if (TOOL_OF[route] === tool) {
          expect(res.status, `${tool} ${route}`).toBeLessThan(300);
        } else {
          expect(res.status, `${tool} ${route}`).toBe(403);
          if (route !== "head") expect(res.body.error.code, `${tool} ${route}`).toBe("tool_not_allowed");
        }
      }
      // Stats needs the read tool.
      expect((await call("GET", `${base}/stats`)).status).toBe(tool === "fs_read" ? 200 : 403);
    }
    as(["fs_*"]);
    await put("m9.txt", "x");
    await put("del9.txt", "x");
    for (const [route, res] of Object.entries(await everyRoute(call, base, 9))) {
      expect(res.status, route).toBeLessThan(300);
    }
    as(["kv_*", "storage_*"]);
    const denied = await call("PUT", `${base}/files/no.txt`, "x");
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: "tool_not_allowed" });
    expect(denied.body.error.message).toContain("fs_write");
    expect((await api("GET", `${base}/files/no.txt`)).status).toBe(404);
  });

  it("answers 404 not_found to a key of another group, whatever its tools", async () => {
    const { as, call, api, base } = await withScopedFs();
    const other = (await api("POST", "/v1/groups", { name: "other" })).body;
    as(["fs_*"], other.id);
    for (const res of Object.values(await everyRoute(call, base, 0))) {
      expect(res.status).toBe(404);
      if (res.body !== undefined) expect(res.body.error.code).toBe("not_found");
    }
  });
});

describe("fs: wrong type, pause, stats", () => {
  it("answers 400 wrong_type naming the types on fs routes of a kv primitive, and kv routes of an fs primitive", async () => {
    const server = await withFs();
    const kv = await server.engine.invoke<PrimitiveInfo>(LOCAL_PRINCIPAL, "primitive.create", null, {
      name: "cache",
      type: "kv",
      group: "app",
    });
    const results = await everyRoute(server.api, `/v1/primitives/${kv.id}`, 0);
    for (const [route, res] of Object.entries(results)) {
      expect(res.status, route).toBe(400);
      if (route === "head") continue;
      expect(res.body.error.code, route).toBe("wrong_type");
      expect(res.body.error.message, route).toContain("fs primitives");
      expect(res.body.error.message, route).toContain("is a kv");
    }
    const onFs = await server.api("GET", `${server.base}/keys/a`);
    expect(onFs.status).toBe(400);
    expect(onFs.body.error.code).toBe("wrong_type");
    expect((await server.api("GET", `${server.base}/export`)).body.error.code).toBe("wrong_type");
  });

  it("answers 423 paused on every data route of a paused store, while stats work, and works again on resume", async () => {
    const server = await withFs();
    const { api, base, put, get, engine, fs } = server;
    await put("seed.txt", "seed");
    await put("tree/a.txt", "a");
    await engine.services.catalog.updatePrimitive(fs.id, { paused: true });
    for (const [route, res] of Object.entries(await everyRoute(api, base, 0))) {
      expect(res.status, route).toBe(423);
      if (route !== "head") expect(res.body.error.code, route).toBe("paused");
    }
    expect((await api("GET", `${base}/stats`)).body).toMatchObject({ type: "fs", items: 2, paused: true });
    await engine.services.catalog.updatePrimitive(fs.id, { paused: false });
    expect((await get("seed.txt")).bytes.toString()).toBe("seed");
  });

  it("counts files (not directories) in items, and blob bytes in size_bytes", async () => {
    const { api, base, put } = await withFs();
    const empty = (await api("GET", `${base}/stats`)).body;
    expect(empty).toMatchObject({ type: "fs", items: 0, paused: false });
    await put("a/b/c.txt", "c");
    await put("big.bin", pattern(300 * 1024, 1));
    await api("POST", `${base}/mkdir`, { path: "x/y/z" });
    const stats = (await api("GET", `${base}/stats`)).body;
    expect(stats.items).toBe(2);
    expect(stats.size_bytes - empty.size_bytes).toBeGreaterThanOrEqual(300 * 1024);
    expect((await api("GET", base)).body.size_bytes).toBe(stats.size_bytes);
  });

  it("audits calls with the path as target and never the contents", async () => {
    const { api, base, put, engine } = await withFs();
    await put("notes/secret.txt", "do-not-log-this");
    await api("GET", `${base}/files/notes/secret.txt`);
    await api("POST", `${base}/move`, { from: "notes/secret.txt", to: "notes/moved.txt" });
    await api("GET", `${base}/search?q=log`);
    await engine.services.audit.flush();
    const entries = await engine.services.catalog.listAudit({ group: "app", limit: 50 });
    const byAction = Object.fromEntries(entries.map((e) => [e.action, e]));
    expect(byAction["fs.write"]).toMatchObject({ target: "/notes/secret.txt", primitive: "fs", instance: "work" });
    expect(byAction["fs.write"]?.detail).toEqual({ size: 15, created: true });
    expect(byAction["fs.read"]?.target).toBe("/notes/secret.txt");
    expect(byAction["fs.move"]).toMatchObject({ target: "/notes/moved.txt", detail: { from: "/notes/secret.txt" } });
    expect(byAction["fs.search"]).toBeDefined();
    expect(JSON.stringify(entries)).not.toContain("do-not-log-this");
  });
});

describe("fs: persistence", () => {
  it("keeps files, directories, modes, blobs and the search index across a restart", async () => {
    const first = await withFs();
    const big = pattern(200 * 1024, 5);
    await first.put("docs/readme.md", "persistent aardvark notes", { "x-service-mode": "600" });
    await first.put("docs/big.bin", big);
    await first.api("POST", `${first.base}/mkdir`, { path: "empty/dir" });
    await first.api("POST", `${first.base}/forks`, { from: "docs", to: "docs-copy" });
    await first.close();

    const server = fsOn(await startServer({ dataDir: first.dataDir }), first.fs);
    expect((await server.get("docs/readme.md")).bytes.toString()).toBe("persistent aardvark notes");
    expect((await server.get("docs/readme.md", "?stat=1")).json.mode).toBe("600");
    expect((await server.get("docs-copy/big.bin")).bytes.equals(big)).toBe(true);
    expect(paths(await server.get("", "?recursive=1"))).toEqual([
      "/docs",
      "/docs-copy",
      "/docs-copy/big.bin",
      "/docs-copy/readme.md",
      "/docs/big.bin",
      "/docs/readme.md",
      "/empty",
      "/empty/dir",
    ]);
    const hits = await server.api("GET", `${server.base}/search?q=aardvark`);
    expect(hits.body.data.map((h: { path: string }) => h.path).sort()).toEqual([
      "/docs-copy/readme.md",
      "/docs/readme.md",
    ]);
    expect((await server.api("GET", `${server.base}/glob?pattern=**/*.bin`)).body.data).toEqual([
      "/docs-copy/big.bin",
      "/docs/big.bin",
    ]);
    expect((await server.api("GET", `${server.base}/stats`)).body.items).toBe(4);
    // A second fs primitive in the same engine is a separate tree.
    const second = fsOn(server, await createFs(server, "other"));
    expect(paths(await second.get(""))).toEqual([]);
  });
});
