import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { moveWorkspace, rebuildCell } from "@prim/cells";
import { createWorkspace, readPlacement } from "@prim/db";
import { call, FAST_ENTERPRISE, startCells, type TestCellNode, type TestCells } from "@prim/testkit/cloud";
import type { InvokeMeta, Principal } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readApiEnv } from "../src/index.js";

let cells: TestCells;

beforeAll(async () => {
  cells = await startCells("cells", ["cell-a", "cell-b", "cell-c"]);
}, 60_000);
afterAll(async () => {
  await cells?.stop();
});

const pool = () => cells.cells[0]?.api.hub.pool as NonNullable<(typeof cells.cells)[0]>["api"]["hub"]["pool"];
const node = (id: string) => cells.cells.find((c) => c.id === id) as (typeof cells.cells)[0];
const operatorEnv = () => readApiEnv({ ...cells.env, PRIM_DATA_DIR: "/nonexistent" });

async function workspaceWithKv(name: string) {
  const ws = await createWorkspace(pool(), { name, ...FAST_ENTERPRISE });
  const placement = await readPlacement(pool(), ws.workspace.id);
  return { ...ws, cell: placement?.cell as string };
}

/**
 * The meta that `cell`'s engines are handed with the next `op` call for `workspace` (what the
 * request vouched for, such as the client's address); resolved once the call is counted in flight.
 */
function nextCall(cell: TestCellNode, workspace: string, op: string): Promise<InvokeMeta | undefined> {
  const tenants = cell.api.tenants;
  const invoke = tenants.invoke;
  return new Promise((resolve) => {
    tenants.invoke = ((
      principal: Principal,
      opName: string,
      target: string | null,
      input: unknown,
      meta?: InvokeMeta,
    ) => {
      const result = invoke.call(tenants, principal, opName, target, input, meta);
      if (principal.workspace === workspace && opName === op) {
        tenants.invoke = invoke;
        resolve(meta);
      }
      return result;
    }) as typeof invoke;
  });
}

describe("several cells", () => {
  it("places new workspaces on the least-loaded open cell", async () => {
    const placed = [];
    for (let i = 0; i < 6; i++) placed.push((await workspaceWithKv(`spread-${i}`)).cell);
    const counts = new Map<string, number>();
    for (const cell of placed) counts.set(cell, (counts.get(cell) ?? 0) + 1);
    expect([...counts.values()].sort()).toEqual([2, 2, 2]);
  });

  it("forwards REST requests from any cell to the owner, streaming bodies and keeping X-Request-Id", async () => {
    const ws = await workspaceWithKv("forward");
    const others = cells.cells.filter((c) => c.id !== ws.cell);
    const entry = others[0] as (typeof cells.cells)[0];
    expect((await call(entry.url, ws.key, "POST", "/v1/groups", { name: "app" })).status).toBe(201);
    const kv = await call(entry.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    expect(kv.status).toBe(201);
    const put = await fetch(`${entry.url}/v1/primitives/${kv.body.id}/keys/greeting`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${ws.key}`,
        "content-type": "application/json",
        "x-request-id": "req-forward-1",
      },
      body: JSON.stringify({ value: "hello" }),
    });
    expect(put.status).toBeLessThan(300);
    expect(put.headers.get("x-request-id")).toBe("req-forward-1");
    for (const c of cells.cells) {
      const got = await call(c.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/greeting`);
      expect(got.status).toBe(200);
      expect(got.body.value).toBe("hello");
    }
    // Only the owner has the workspace's files.
    for (const c of others) expect(existsSync(join(c.dataDir, ws.workspace.id))).toBe(false);
    expect(existsSync(join(node(ws.cell).dataDir, ws.workspace.id))).toBe(true);

    // A 3 MiB upload and download through a non-owner.
    const store = await call(entry.url, ws.key, "POST", "/v1/primitives", {
      name: "files",
      type: "storage",
      group: "app",
    });
    const body = Buffer.alloc(3 * 1024 * 1024, 3);
    const up = await fetch(`${entry.url}/v1/primitives/${store.body.id}/objects/big.bin`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/octet-stream" },
      body,
    });
    expect(up.status).toBeLessThan(300);
    const down = await fetch(`${others[1]?.url}/v1/primitives/${store.body.id}/objects/big.bin`, {
      headers: { authorization: `Bearer ${ws.key}` },
    });
    const bytes = Buffer.from(await down.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(createHash("sha256").update(body).digest("hex"));

    // A signed URL made on one cell works through any other (routed by the workspace in its token).
    const signed = await call(entry.url, ws.key, "POST", `/v1/primitives/${store.body.id}/presign`, {
      key: "big.bin",
      method: "GET",
      expires_in: "1m",
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const path = new URL(signed.body.url).pathname;
    for (const c of cells.cells) {
      const res = await fetch(`${c.url}${path}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(body.length);
    }
  });

  it("moves a workspace with its data; every entry point then reaches the new cell", async () => {
    const ws = await workspaceWithKv("move");
    const from = node(ws.cell);
    const to = cells.cells.find((c) => c.id !== ws.cell) as (typeof cells.cells)[0];
    await call(from.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = await call(from.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    const db = await call(from.url, ws.key, "POST", "/v1/primitives", { name: "main", type: "db", group: "app" });
    await call(from.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/a`, { value: 1 });
    await call(from.url, ws.key, "POST", `/v1/primitives/${db.body.id}/query`, { sql: "CREATE TABLE t (x INTEGER)" });
    await call(from.url, ws.key, "POST", `/v1/primitives/${db.body.id}/query`, { sql: "INSERT INTO t VALUES (42)" });
    const report = await moveWorkspace(operatorEnv(), ws.workspace.id, to.id);
    expect(report).toMatchObject({ moved: true, from: from.id, to: to.id, released: true });
    expect((await readPlacement(pool(), ws.workspace.id))?.cell).toBe(to.id);
    expect(existsSync(join(from.dataDir, ws.workspace.id))).toBe(false);
    // In the workspace's own audit trail, as the operator's control action.
    const audit = await call(to.url, ws.key, "GET", "/v1/audit?type=workspace&action=workspace.move");
    expect(audit.body.data).toEqual([
      expect.objectContaining({ actor: "admin", target: ws.workspace.id, detail: { from: from.id, to: to.id } }),
    ]);
    for (const c of cells.cells) {
      expect((await call(c.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/a`)).body.value).toBe(1);
      const q = await call(c.url, ws.key, "POST", `/v1/primitives/${db.body.id}/query`, { sql: "SELECT x FROM t" });
      expect(q.status, JSON.stringify(q.body)).toBe(200);
      expect(JSON.stringify(q.body)).toContain("42");
    }
    expect(
      (await call(from.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/b`, { value: 2 })).status,
    ).toBeLessThan(300);
    expect((await call(to.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/b`)).body.value).toBe(2);
  });

  it("rebuilds a lost cell's workspaces from their shipped archives, losing only what came after", async () => {
    const ws = await workspaceWithKv("rebuild");
    const lost = node(ws.cell);
    await call(lost.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = await call(lost.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    await call(lost.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/kept`, { value: "before" });
    const shipped = await lost.api.cellService.shipNow();
    expect(shipped.shipped).toContain(ws.workspace.id);
    await call(lost.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/lost`, { value: "after" });
    await cells.stopCell(lost.id);
    const { rmSync } = await import("node:fs");
    rmSync(lost.dataDir, { recursive: true, force: true });
    const report = await rebuildCell(operatorEnv(), lost.id);
    const entry = report.restored.find((r) => r.workspace === ws.workspace.id);
    expect(entry).toBeDefined();
    const survivor = node(entry?.to as string);
    const audit = await call(survivor.url, ws.key, "GET", "/v1/audit?type=workspace&action=workspace.move");
    expect(audit.body.data).toEqual([
      expect.objectContaining({ target: ws.workspace.id, detail: { from: lost.id, to: survivor.id } }),
    ]);
    expect((await call(survivor.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/kept`)).body.value).toBe(
      "before",
    );
    expect((await call(survivor.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/lost`)).status).toBe(404);
  });

  it("holds requests for a frozen workspace, then serves them; past 10 s answers 503 with Retry-After", async () => {
    const ws = await workspaceWithKv("frozen");
    const owner = node(ws.cell);
    const entry = cells.cells.find((c) => c.id !== ws.cell) as (typeof cells.cells)[0];
    await call(owner.url, ws.key, "POST", "/v1/groups", { name: "app" });
    const kv = await call(owner.url, ws.key, "POST", "/v1/primitives", { name: "cache", type: "kv", group: "app" });
    const until = Date.now() + 400;
    await owner.api.tenants.quiesce(ws.workspace.id, until);
    const started = Date.now();
    const put = await call(entry.url, ws.key, "PUT", `/v1/primitives/${kv.body.id}/keys/k`, { value: "held" });
    expect(put.status).toBeLessThan(300);
    expect(Date.now()).toBeGreaterThanOrEqual(until - 5);
    expect(Date.now() - started).toBeLessThan(5_000);
    await owner.api.tenants.quiesce(ws.workspace.id, Date.now() + 30_000);
    const refused = await call(owner.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/k`);
    owner.api.tenants.thaw(ws.workspace.id);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("internal_error");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await call(entry.url, ws.key, "GET", `/v1/primitives/${kv.body.id}/keys/k`)).body.value).toBe("held");

    // A long poll in flight does not hold a move up: quiescing ends it (no jobs) at once.
    const queue = await call(owner.url, ws.key, "POST", "/v1/primitives", {
      name: "jobs",
      type: "queue",
      group: "app",
    });
    const inFlight = nextCall(owner, ws.workspace.id, "queue.receive");
    const polling = call(entry.url, ws.key, "POST", `/v1/primitives/${queue.body.id}/queues/q/receive`, {
      wait: "20s",
    });
    await inFlight;
    const quiesceStarted = Date.now();
    await owner.api.tenants.quiesce(ws.workspace.id, Date.now() + 5_000);
    expect(Date.now() - quiesceStarted).toBeLessThan(3_000);
    owner.api.tenants.thaw(ws.workspace.id);
    const polled = await polling;
    expect(polled.status).toBe(200);
    expect(JSON.stringify(polled.body)).toMatch(/\[\]/);
  }, 30_000);

  it("keeps the forwarding door shut: the cells' secret is checked, client-sent hop headers count for nothing", async () => {
    const ws = await workspaceWithKv("door");
    const owner = node(ws.cell);
    const entry = cells.cells.find((c) => c.id !== ws.cell) as TestCellNode;
    const secret = cells.env.PRIM_INTERNAL_SECRET as string;
    const groups = (url: string, headers: Record<string, string>) =>
      fetch(`${url}/v1/groups`, { headers: { authorization: `Bearer ${ws.key}`, ...headers } });
    // Not a public route.
    expect((await call(owner.url, ws.key, "GET", "/internal/forward/v1/groups")).status).toBe(404);
    // The internal listener without the secret, or with a wrong one.
    for (const wrong of [undefined, "wrong-secret-wrong-secret-wrong-secret-00"]) {
      const res = await groups(
        `${owner.internalUrl}/internal/forward`,
        wrong === undefined ? {} : { "x-prim-cell-secret": wrong },
      );
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_token");
    }
    // With it, the caller's own credential is still checked by the owner.
    const forged = await fetch(`${owner.internalUrl}/internal/forward/v1/groups`, {
      headers: { authorization: "Bearer pk_notakey", "x-prim-cell-secret": secret },
    });
    expect(forged.status).toBe(401);

    // The hop headers (forwarding.ts) sent by a client, to the owner and through another cell:
    // served as any request, the hops not counted (two would be one too many: 503), the address
    // the one the cells saw.
    const hopHeaders = {
      "x-prim-hops": "2",
      "x-prim-client-ip": "203.0.113.9",
      "x-prim-cell-secret": "wrong-secret-wrong-secret-wrong-secret-00",
    };
    for (const via of [owner, entry]) {
      const seen = nextCall(owner, ws.workspace.id, "group.list");
      expect((await groups(via.url, hopHeaders)).status, via.id).toBe(200);
      expect((await seen)?.clientIp, via.id).toBe("127.0.0.1");
    }
    // The same headers from a cell, with the secret, do count: what the checks above tell apart.
    const vouched = nextCall(owner, ws.workspace.id, "group.list");
    const fromCell = { ...hopHeaders, "x-prim-cell-secret": secret };
    expect((await groups(`${owner.internalUrl}/internal/forward`, fromCell)).status).toBe(200);
    expect((await vouched)?.clientIp).toBe("203.0.113.9");
    expect((await groups(`${entry.internalUrl}/internal/forward`, fromCell)).status).toBe(503);

    // Another workspace's key, on a cell that does not own it (forwarded to its owner), reaches
    // only its own workspace.
    const other = await workspaceWithKv("door-other");
    await call(owner.url, ws.key, "POST", "/v1/groups", { name: "mine" });
    await call(node(other.cell).url, other.key, "POST", "/v1/groups", { name: "theirs" });
    const via = other.cell === owner.id ? entry : owner;
    let reachedOwner = false;
    void nextCall(node(other.cell), other.workspace.id, "group.list").then(() => {
      reachedOwner = true;
    });
    const list = await call(via.url, other.key, "GET", "/v1/groups");
    expect(list.status).toBe(200);
    expect(list.body.data.map((g: { name: string }) => g.name)).toEqual(["theirs"]);
    expect(reachedOwner, "served by the owner's engines").toBe(true);
  });
});
