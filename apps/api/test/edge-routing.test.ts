// Routing at the edge (issue 43): three api cells as child processes and the real HAProxy in
// front of them (@prim/cells `startEdge`: the generated config, the map written from the
// placements, the map watcher following the placement notices). A tagged key's request reaches
// the owner directly (the owner answers `x-prim-cell`; a Node forward would add `x-prim-via`);
// an untagged key, made before tags, goes round robin and is forwarded in Node as before; a
// signed URL is routed by the workspace its token names; a stale map still answers right; a
// move under traffic fails nothing, and the requests Node forwarded meanwhile are counted; a key
// whose tag was forged to another workspace's is 401 there. Without HAProxy installed this
// suite fails (CI installs Debian's `haproxy`).
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backendName, type Edge, FALLBACK_BACKEND, HAPROXY_BIN, startEdge } from "@prim/cells";
import { base58, hashKey, readPlacement } from "@prim/db";
import { call, freePort } from "@prim/testkit/cloud";
import { attenuate, keyStart, workspaceTag } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, runPrim } from "./cell-processes.js";
import { ok, type ProbeCloud, type ProbeWorkspace, startProbeCloud } from "./probe-cloud.js";

let cloud: ProbeCloud;
let edge: Edge;
const dir = mkdtempSync(join(tmpdir(), "prim-edge-"));
const spaces: Record<"a" | "b" | "c", ProbeWorkspace & { kv: string }> = {} as never;

/** A GET through the edge: status, body, and who routed (HAProxy), served and forwarded it. */
async function viaEdge(key: string | null, path: string, init: RequestInit = {}) {
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const res = await fetch(`${edge.url}${path}`, { ...init, headers: { ...headers, ...(init.headers ?? {}) } });
  const text = await res.text();
  return {
    status: res.status,
    text,
    backend: res.headers.get("x-prim-edge"),
    cell: res.headers.get("x-prim-cell"),
    via: res.headers.get("x-prim-via"),
  };
}

/** Until HAProxy's map sends `workspace` to `cell` (the watcher applies each notice in turn). */
async function mapSays(workspace: string, cell: string): Promise<void> {
  const tag = workspaceTag(workspace) as string;
  for (let i = 0; i < 400; i++) {
    if ((await edge.runtime.showMap(edge.mapFile)).get(tag) === backendName(cell)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the edge's map never sent ${workspace} to ${cell}`);
}

beforeAll(async () => {
  cloud = await startProbeCloud("edge_routing", ["cell-a", "cell-b", "cell-c"]);
  for (const id of ["a", "b", "c"] as const) {
    const ws = await cloud.workspace(`edge-${id}`, "enterprise", { on: `cell-${id}` });
    const base = cloud.cell(ws.cell).url;
    await ok(base, ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = (await ok(base, ws.key, "POST", "/v1/primitives", { name: "kv", type: "kv", group: "app" })).id;
    await ok(base, ws.key, "PUT", `/v1/primitives/${kv}/keys/k`, { value: `value of ${id}` });
    spaces[id] = { ...ws, kv };
  }
}, 180_000);

afterAll(async () => {
  await edge?.close();
  await cloud?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("HAProxy in front of three cells", () => {
  it("is installed (CI installs Debian's haproxy: this suite never skips)", async () => {
    expect(existsSync(HAPROXY_BIN), `${HAPROXY_BIN} is missing: apt-get install haproxy`).toBe(true);
    edge = await startEdge({
      databaseUrl: cloud.env.DATABASE_URL as string,
      cells: cloud.cells.map((c) => ({ id: c.id, url: c.url })),
      bind: { host: "127.0.0.1", port: await freePort() },
      dir,
    });
    // Written from the placements before HAProxy started, resynced over the socket since.
    const map = await edge.runtime.showMap(edge.mapFile);
    for (const ws of Object.values(spaces)) expect(map.get(workspaceTag(ws.id) as string)).toBe(backendName(ws.cell));
  }, 30_000);

  it("sends a tagged key's request straight to the owner: no cell forwards it", async () => {
    for (const ws of Object.values(spaces)) {
      expect(ws.key.slice(3, 29)).toBe(workspaceTag(ws.id));
      for (let i = 0; i < 10; i++) {
        const got = await viaEdge(ws.key, `/v1/primitives/${ws.kv}/keys/k`);
        expect(got).toMatchObject({ status: 200, backend: backendName(ws.cell), cell: ws.cell, via: null });
      }
      // The scheme in any case, as the cells accept it.
      const lower = await viaEdge(null, `/v1/primitives/${ws.kv}/keys/k`, {
        headers: { authorization: `bearer ${ws.key}` },
      });
      expect(lower).toMatchObject({ status: 200, backend: backendName(ws.cell), via: null });
    }
  });

  it("sends a pa_ token of a tagged key, and an OAuth-shaped po_ token, by their tag too", async () => {
    const ws = spaces.b;
    const narrowed = await attenuate(ws.key, [{ type: "read_only" }]);
    const got = await viaEdge(narrowed, `/v1/primitives/${ws.kv}/keys/k`);
    expect(got).toMatchObject({ status: 200, backend: backendName(ws.cell), cell: ws.cell, via: null });
    // A po_ token is MCP's (REST refuses it), but the edge routes it by its tag all the same.
    const oauth = await viaEdge(`po_${workspaceTag(ws.id)}_${"a".repeat(43)}`, "/v1/groups");
    expect(oauth).toMatchObject({ status: 401, backend: backendName(ws.cell) });
  });

  it("learns a new workspace's placement from its notice", async () => {
    const ws = await cloud.workspace("edge-new", "enterprise", { on: "cell-b" });
    await mapSays(ws.id, "cell-b");
    const got = await viaEdge(ws.key, "/v1/groups");
    expect(got).toMatchObject({ status: 200, backend: backendName("cell-b"), cell: "cell-b", via: null });
  });

  it("routes an untagged key (made before tags) by the fallback; the cells forward it in Node", async () => {
    const ws = spaces.a;
    const old = `pk_${base58(randomBytes(24))}`;
    await cloud.pool.query(
      "INSERT INTO api_keys (id, hash, start, workspace_id, name, created_by) VALUES ($1, $2, $3, $4, 'old', 'admin')",
      [`key_old${randomBytes(8).toString("hex")}`, hashKey(old), keyStart(old), ws.id],
    );
    const answers = await Promise.all(Array.from({ length: 9 }, () => viaEdge(old, `/v1/primitives/${ws.kv}/keys/k`)));
    for (const got of answers) {
      expect(got).toMatchObject({ status: 200, backend: FALLBACK_BACKEND, cell: ws.cell });
      expect(JSON.parse(got.text).value).toBe("value of a");
    }
    // Round robin over three cells: the two that do not own it forwarded.
    expect(answers.filter((a) => a.via !== null).length).toBeGreaterThan(0);
    for (const got of answers) expect(got.via === null || got.via !== ws.cell).toBe(true);
  });

  it("routes a signed URL by the workspace its token names", async () => {
    const ws = spaces.c;
    const store = await ok(edge.url, ws.key, "POST", "/v1/primitives", {
      name: "files",
      type: "storage",
      group: "app",
    });
    const put = await viaEdge(ws.key, `/v1/primitives/${store.id}/objects/a.txt`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "signed hello",
    });
    expect(put.status).toBe(200);
    const grant = await ok(edge.url, ws.key, "POST", `/v1/primitives/${store.id}/presign`, { key: "a.txt" });
    const got = await viaEdge(null, new URL(grant.url).pathname);
    expect(got).toMatchObject({ status: 200, text: "signed hello", backend: backendName(ws.cell), cell: ws.cell });
    expect(got.via).toBeNull();
  });

  it("answers right through a stale map: the wrong cell forwards in Node", async () => {
    const ws = spaces.b;
    const tag = workspaceTag(ws.id) as string;
    await edge.runtime.setMap(edge.mapFile, tag, backendName("cell-a"));
    const got = await viaEdge(ws.key, `/v1/primitives/${ws.kv}/keys/k`);
    expect(got).toMatchObject({ status: 200, backend: backendName("cell-a"), cell: "cell-b", via: "cell-a" });
    expect(JSON.parse(got.text).value).toBe("value of b");
    await edge.watcher.resync();
    expect((await edge.runtime.showMap(edge.mapFile)).get(tag)).toBe(backendName("cell-b"));
  });

  it("refuses a key whose tag was forged to another workspace's (401), which reaches nothing there", async () => {
    const [mine, theirs] = [spaces.a, spaces.b];
    const forged = `pk_${workspaceTag(theirs.id)}_${mine.key.slice(30)}`;
    for (const path of [`/v1/primitives/${theirs.kv}/keys/k`, `/v1/primitives/${mine.kv}/keys/k`, "/v1/groups"]) {
      const got = await viaEdge(forged, path);
      expect(got.status, path).toBe(401);
      expect(JSON.parse(got.text).error.code).toBe("invalid_token");
      // The edge sent it to the other workspace's cell, which refused it before any engine.
      expect(got.backend).toBe(backendName(theirs.cell));
      expect(got.cell).toBeNull();
    }
    // Straight to a cell, too (the tag is checked by the cell, not the edge).
    const direct = await call(cloud.cell(mine.cell).url, forged, "GET", `/v1/primitives/${mine.kv}/keys/k`);
    expect(direct.status).toBe(401);
    // A stored key whose tag disagrees with its own workspace (no key is made so): refused too.
    const mislabeled = `pk_${workspaceTag(theirs.id)}_${base58(randomBytes(24))}`;
    await cloud.pool.query(
      "INSERT INTO api_keys (id, hash, start, workspace_id, name, created_by) VALUES ($1, $2, $3, $4, 'odd', 'admin')",
      [`key_odd${randomBytes(8).toString("hex")}`, hashKey(mislabeled), keyStart(mislabeled), mine.id],
    );
    for (const base of [edge.url, cloud.cell(mine.cell).url]) {
      expect((await call(base, mislabeled, "GET", `/v1/primitives/${mine.kv}/keys/k`)).status).toBe(401);
    }
    const rightful = await viaEdge(theirs.key, `/v1/primitives/${theirs.kv}/keys/k`);
    expect(rightful).toMatchObject({ status: 200, cell: theirs.cell, via: null });
    expect(JSON.parse(rightful.text).value).toBe("value of b");
  });

  it("moves a workspace under traffic through the edge: nothing fails; Node forwards only around the flip", async () => {
    const ws = spaces.a;
    const path = `/v1/primitives/${ws.kv}/keys/k`;
    const tally = { requests: 0, forwarded: 0, retried: 0, failures: [] as string[], writes: 0 };
    let stop = false;
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const write = i % 3 === 0;
        for (let attempt = 0; ; attempt++) {
          tally.requests++;
          const got = write
            ? await viaEdge(ws.key, path, {
                method: "PUT",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ value: `w${n}-${i}` }),
              })
            : await viaEdge(ws.key, path);
          if (got.via !== null) tally.forwarded++;
          if (got.status === 200) break;
          // Today's move semantics: a request held past the freeze answers 503 with Retry-After.
          if (got.status === 503 && attempt < 5) {
            tally.retried++;
            continue;
          }
          tally.failures.push(`${got.status} ${got.text}`);
          break;
        }
        if (write) tally.writes++;
      }
    };
    const clients = Array.from({ length: 4 }, (_, n) => client(n));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const move = await runPrim(
      ["admin", "workspace", "move", "--workspace", ws.id, "--to", "cell-c", "--json"],
      childEnv(cloud.env),
      { timeoutMs: 60_000 },
    );
    expect(move.code, move.stderr).toBe(0);
    await mapSays(ws.id, "cell-c");
    const afterFlip = tally.requests;
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop = true;
    await Promise.all(clients);
    console.log(
      `edge-routing: move under traffic: ${tally.requests} requests (${tally.writes} writes), ` +
        `${tally.forwarded} forwarded in Node, ${tally.retried} retried (503), frozen ${JSON.parse(move.stdout).frozen_ms} ms; ` +
        `${tally.requests - afterFlip} after the map had the new cell`,
    );
    expect(tally.failures).toEqual([]);
    expect((await readPlacement(cloud.pool, ws.id))?.cell).toBe("cell-c");
    // Settled: straight to the new owner again.
    const got = await viaEdge(ws.key, path);
    expect(got).toMatchObject({ status: 200, backend: backendName("cell-c"), cell: "cell-c", via: null });
  }, 90_000);
});
