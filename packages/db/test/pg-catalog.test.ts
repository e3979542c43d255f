import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Cell, Engine, ManualClock } from "@prim/engine";
import { freshDatabase, withClient } from "@prim/testkit";
import type { AuditEntry, Page, PrimitiveInfo, Principal } from "@prim/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHub, migrate } from "../src/index.js";

const db = freshDatabase("catalog");
const dataDir = mkdtempSync(join(tmpdir(), "prim-pgcat-"));
const clock = new ManualClock(Date.UTC(2026, 10, 24, 12));
let hub: CatalogHub;
let cell: Cell;
let a: Engine;
let b: Engine;

const owner = (workspace: string): Principal => ({
  kind: "account",
  workspace,
  actor: `key:${workspace}`,
  groupId: null,
  tools: null,
});
const A = owner("ws_a");
const B = owner("ws_b");

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  await withClient(db.url, (c) => c.query("INSERT INTO workspaces (id, name) VALUES ('ws_a', 'A'), ('ws_b', 'B')"));
  hub = await CatalogHub.open(db.url, { clock: () => clock.now() });
  cell = Cell.openLocal({ dataDir, clock });
  a = Engine.forWorkspace(cell, "ws_a", { catalog: hub.catalog("ws_a"), auditFlushMs: 1 });
  b = Engine.forWorkspace(cell, "ws_b", { catalog: hub.catalog("ws_b"), auditFlushMs: 1 });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await cell?.close();
  await hub?.close();
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "no error",
    (err: { code?: string }) => err.code ?? String(err),
  );
}

describe("the engine over the Postgres catalog", () => {
  it("serves groups, primitives, data, lifecycle and the audit trail for one workspace", async () => {
    await a.invoke(A, "group.create", null, { name: "app" });
    expect(await codeOf(a.invoke(A, "group.create", null, { name: "app" }))).toBe("already_exists");
    await a.invoke(A, "group.create", null, { name: "Zeta".toLowerCase() });
    const kv = await a.invoke<PrimitiveInfo>(A, "primitive.create", null, { name: "cache", type: "kv", group: "app" });
    expect(await codeOf(a.invoke(A, "primitive.create", null, { name: "cache", type: "kv", group: "app" }))).toBe(
      "already_exists",
    );
    await a.invoke(A, "kv.set", kv.id, { key: "k", value: { n: 1 } });
    expect(await a.invoke(A, "kv.get", kv.id, { key: "k" })).toMatchObject({ value: { n: 1 } });

    const snap = await a.invoke<{ id: string }>(A, "primitive.snapshot", kv.id, { name: "before" });
    await a.invoke(A, "kv.set", kv.id, { key: "k", value: 2 });
    await a.invoke(A, "primitive.restore", kv.id, { snapshot: "before" });
    expect(await a.invoke(A, "kv.get", kv.id, { key: "k" })).toMatchObject({ value: { n: 1 } });
    const fork = await a.invoke<PrimitiveInfo>(A, "primitive.fork", kv.id, { name: "copy", group: "zeta" });
    expect(fork.forked_from).toMatchObject({ id: kv.id, snapshot: null });

    await a.invoke(A, "primitive.update", kv.id, { name: "renamed" });
    await a.invoke(A, "primitive.pause", kv.id, {});
    expect(await codeOf(a.invoke(A, "kv.get", kv.id, { key: "k" }))).toBe("paused");
    await a.invoke(A, "primitive.resume", kv.id, {});
    const groups = await a.invoke<Page<{ name: string }>>(A, "group.list", null, { limit: 1 });
    expect(groups.data.map((g) => g.name)).toEqual(["app"]);
    const next = await a.invoke<Page<{ name: string }>>(A, "group.list", null, {
      limit: 1,
      cursor: groups.next_cursor,
    });
    expect(next.data.map((g) => g.name)).toEqual(["zeta"]);
    const snaps = await a.invoke<Page<{ id: string }>>(A, "primitive.snapshots", kv.id, {});
    expect(snaps.data.map((s) => s.id)).toEqual([snap.id]);

    await a.services.audit.flush();
    const trail = await a.invoke<Page<AuditEntry>>(A, "audit.list", null, { action: "primitive.", limit: 50 });
    expect(trail.data.map((e) => e.action)).toEqual([
      "primitive.resume",
      "primitive.pause",
      "primitive.update",
      "primitive.fork",
      "primitive.restore",
      "primitive.snapshot",
      "primitive.create",
      "primitive.create",
    ]);
    const sets = await a.invoke<Page<AuditEntry>>(A, "audit.primitive", kv.id, { action: "kv.set", limit: 1 });
    expect(sets.data).toHaveLength(1);
    expect(sets.next_cursor).not.toBeNull();
  });

  it("never shows one workspace another's group, primitive or snapshot, even by id", async () => {
    const [kv] = (await a.invoke<Page<PrimitiveInfo>>(A, "primitive.list", null, { type: "kv" })).data;
    const group = await a.invoke<{ id: string }>(A, "group.get", "app", {});
    await b.invoke(B, "group.create", null, { name: "app" }); // the same name is B's own
    expect(await codeOf(b.invoke(B, "kv.get", kv?.id as string, { key: "k" }))).toBe("not_found");
    expect(await codeOf(b.invoke(B, "group.get", group.id, {}))).toBe("not_found");
    expect(await codeOf(b.invoke(B, "primitive.delete", kv?.id as string, {}))).toBe("not_found");
    const mine = await b.invoke<PrimitiveInfo>(B, "primitive.create", null, {
      name: "cache",
      type: "kv",
      group: "app",
    });
    expect(await codeOf(b.invoke(B, "primitive.restore", mine.id, { snapshot: "before" }))).toBe("not_found");
    expect((await b.invoke<Page<PrimitiveInfo>>(B, "primitive.list", null, {})).data.map((p) => p.id)).toEqual([
      mine.id,
    ]);
    await b.services.audit.flush();
    const trail = await b.invoke<Page<AuditEntry>>(B, "audit.list", null, {});
    expect(trail.data.every((e) => e.actor === "key:ws_b")).toBe(true);
    // A's principal at B's engine is refused before any lookup.
    expect(await codeOf(b.invoke(A, "kv.get", mine.id, { key: "k" }))).toBe("invalid_token");
  });

  it("sees a rename, pause and delete made by another process on the next call", async () => {
    const kv = await a.invoke<PrimitiveInfo>(A, "primitive.create", null, { name: "shared", type: "kv", group: "app" });
    await a.invoke(A, "kv.get", kv.id, { key: "nope" }).catch(() => {}); // cached now
    expect(a.services.catalog.cachedPrimitive?.(kv.id)?.name).toBe("shared");
    await otherProcess(["rename", kv.id, "moved-away"]);
    expect((await a.invoke<PrimitiveInfo>(A, "primitive.get", kv.id, {})).name).toBe("moved-away");
    await otherProcess(["pause", kv.id]);
    expect(await codeOf(a.invoke(A, "kv.get", kv.id, { key: "k" }))).toBe("paused");
    await otherProcess(["delete", kv.id]);
    expect(await codeOf(a.invoke(A, "kv.get", kv.id, { key: "k" }))).toBe("not_found");
  });
});

/** Runs test/catalog-writer.ts in a child process against the same database (workspace ws_a). */
function otherProcess(args: string[]): Promise<void> {
  const hooks = fileURLToPath(new URL("../../../scripts/register-source-hooks.mjs", import.meta.url));
  const script = fileURLToPath(new URL("./catalog-writer.ts", import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--import", hooks, script, db.url, ...args], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`catalog-writer exited ${code}`))));
  });
}
