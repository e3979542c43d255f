import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CatalogHub, createWorkspace, migrate, openPool, type PlacementRow, registerCell } from "@prim/db";
import { Cell, OPERATIONS, type Principal } from "@prim/engine";
import { createInternalServer, createServer, listenInternal } from "@prim/http";
import { freshDatabase } from "@prim/testkit";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlacementCache } from "../src/placement-cache.js";
import { PlacementRouter } from "../src/placement-router.js";
import { WorkspaceEngines } from "../src/workspace-engines.js";

/**
 * The one router of apps/api and apps/mcp over a real Postgres, a real cell and real HTTP: a
 * REST request's placement is read once (`divert` settles it, `invoke` trusts it), a frozen
 * workspace's request waits and then runs, and a process without a cell reaches the owner's
 * internal listener, or its fallback when Postgres does not answer.
 */

const SECRET = "s".repeat(40);
const db = freshDatabase("router");
const dataDir = mkdtempSync(join(tmpdir(), "prim-router-"));
const operations = new Map(OPERATIONS.map((op) => [op.name, op]));

/** A real placement cache that counts its lookups. */
class CountingCache extends PlacementCache {
  reads = 0;
  override placement(workspace: string, options?: { fresh?: boolean; claimer?: string }): Promise<PlacementRow | null> {
    this.reads++;
    return super.placement(workspace, options);
  }
}

let pool: pg.Pool;
let hub: CatalogHub;
let cell: Cell;
let engines: WorkspaceEngines;
let cache: CountingCache;
let app: FastifyInstance;
let internal: FastifyInstance;
let internalUrl: string;
let principal: Principal;

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  pool = await openPool(db.url);
  hub = await CatalogHub.open(db.url);
  await registerCell(pool, "a", null);
  const made = await createWorkspace(pool, { name: "Router" });
  principal = { kind: "account", workspace: made.workspace.id, actor: "key:test", groupId: null, tools: null };
  cell = Cell.openLocal({ dataDir, sqlHosts: 1 });
  engines = new WorkspaceEngines(cell, hub);
  cache = new CountingCache(pool, { hub });
  const router = new PlacementRouter({ placements: cache, secret: SECRET, cell: { id: "a", engines } });
  app = createServer({
    invoker: router,
    divert: (req, reply) => router.divert(req, reply),
    operation: (name) => operations.get(name),
    // One principal object for every request, as a resolver's cache hands out.
    authenticate: () => principal,
  });
  internal = createInternalServer({ invoker: router, secret: SECRET });
  internalUrl = await listenInternal(internal, { port: 0 });
  await registerCell(pool, "a", internalUrl);
}, 60_000);

afterAll(async () => {
  await app?.close();
  await internal?.close();
  cache?.close();
  await engines?.close();
  await cell?.close();
  await hub?.close();
  await pool?.end();
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("PlacementRouter", { timeout: 30_000 }, () => {
  it("reads a REST request's placement once, for its divert and its invoke", async () => {
    const before = cache.reads;
    const created = await app.inject({ method: "POST", url: "/v1/groups", payload: { name: "once" } });
    expect(created.statusCode, created.body).toBe(201);
    expect(cache.reads - before).toBe(1);
    const listed = await app.inject({ method: "GET", url: "/v1/groups" });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data.map((g: { name: string }) => g.name)).toEqual(["once"]);
    expect(cache.reads - before).toBe(2);
    // The caller's principal object is left as it was (divert placed a copy).
    expect(Object.keys(principal).sort()).toEqual(["actor", "groupId", "kind", "tools", "workspace"]);
  });

  it("holds a request for a frozen workspace until the freeze ends, then serves it", async () => {
    const started = Date.now();
    await engines.quiesce(principal.workspace, started + 400);
    const res = await app.inject({ method: "GET", url: "/v1/groups" });
    expect(res.statusCode).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
  });

  it("without a cell, reaches the owner's internal listener, else its fallback", async () => {
    const viaPlacement = new PlacementRouter({
      placements: new PlacementCache(pool),
      secret: SECRET,
      fallbackUrl: "http://127.0.0.1:1",
    });
    const groups = await viaPlacement.invoke<{ data: { name: string }[] }>(principal, "group.list", null, {});
    expect(groups.data.map((g) => g.name)).toEqual(["once"]);
    // Postgres not answering: the fallback cell, which routes the call itself.
    const down = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/x", connectionTimeoutMillis: 500 });
    down.on("error", () => {});
    const viaFallback = new PlacementRouter({
      placements: new PlacementCache(down),
      secret: SECRET,
      fallbackUrl: internalUrl,
    });
    const again = await viaFallback.invoke<{ data: { name: string }[] }>(principal, "group.list", null, {});
    expect(again.data.map((g) => g.name)).toEqual(["once"]);
    await down.end();
  });
});
