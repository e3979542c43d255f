// Two cells for bench/cells.ts, each an apps/api process of its own (`cells-server.ts`), over one
// fresh Postgres database and one temporary directory; an Enterprise workspace placed on one of
// them with a kv holding one small value. `stop` undoes all of it, whatever got started.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createWorkspace, migrate, openPool, readPlacement } from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import type { ChildMessage, ParentMessage } from "../cells-server.js";
import { type Child, childCpuMicros, forkTs } from "./child.js";
import { cpuProfileDir } from "./knobs.js";

const benchDir = dirname(dirname(fileURLToPath(import.meta.url)));

export interface CellProcess {
  id: string;
  /** Public listener, e.g. http://127.0.0.1:41234. */
  url: string;
  internalUrl: string;
  dataDir: string;
  child: Child<ParentMessage, ChildMessage>;
  /** CPU time (user + system, µs) this cell's process has used so far. */
  cpuMicros(): Promise<number>;
}

export interface Cluster {
  cells: CellProcess[];
  databaseUrl: string;
  /** A bare forwarder (`cells-server.ts`'s proxy mode) in front of `cell`'s internal listener. */
  startProxy(cell: CellProcess): Promise<ProxyProcess>;
  /** Closes every cell, drops the database, removes the temp directory; safe to call twice. */
  stop(): Promise<void>;
}

export interface ProxyProcess {
  url: string;
  cpuMicros(): Promise<number>;
}

export interface Placed {
  workspaceId: string;
  key: string;
  /** The cell the workspace is placed on, and the other one. */
  owner: CellProcess;
  entry: CellProcess;
  /** The kv primitive's id and the path of its one key. */
  kvId: string;
  path: string;
}

/** Starts a cell child per id; on any failure stops what was started and rethrows. */
export async function startCluster(ids: readonly string[]): Promise<Cluster> {
  const database = freshDatabase("bench_cells"); // on PRIM_TEST_PG, else the machine's Postgres
  const root = mkdtempSync(join(tmpdir(), "prim-bench-cells-"));
  const cells: CellProcess[] = [];
  const children: Child<ParentMessage, ChildMessage>[] = [];
  let stopped: Promise<void> | null = null;
  const stop = () => {
    stopped ??= (async () => {
      await Promise.allSettled(children.map((c) => c.stop()));
      await database.drop().catch((err: unknown) => console.error("cells: dropping the database failed:", err));
      rmSync(root, { recursive: true, force: true });
    })();
    return stopped;
  };
  try {
    await migrate({ databaseUrl: database.url });
    const shared = {
      DATABASE_URL: database.url,
      PRIM_BLOBS: `local:${join(root, "blobs")}`,
      PRIM_API_PORT: "0",
      PRIM_INTERNAL_PORT: "0",
      PRIM_LISTEN_HOST: "127.0.0.1",
      PRIM_INTERNAL_HOST: "127.0.0.1",
      PRIM_INTERNAL_SECRET: randomBytes(24).toString("hex"),
      PRIM_MASTER_KEY: randomBytes(32).toString("hex"),
      PRIM_LIMITS: "off", // limits are measured by bench/limits.ts
      PRIM_SHIP_INTERVAL_S: "0",
      // biome-ignore lint/suspicious/noUndeclaredEnvVars: the machine's Redis, as the cells' tests use
      ...(process.env.REDIS_URL === undefined ? {} : { REDIS_URL: process.env.REDIS_URL }),
    };
    const profiles = cpuProfileDir();
    /** Forks a child, sends it `start`, waits for its `ready` (or `failed`). */
    const spawn = async (label: string, start: ParentMessage) => {
      const child = forkTs<ParentMessage, ChildMessage>(join(benchDir, "cells-server.ts"), { cpuProfileDir: profiles });
      children.push(child);
      const ready = child.next("ready");
      const failed = child.next("failed").then((m) => {
        throw new Error(`${label} did not start: ${m.message}`);
      });
      failed.catch(() => {}); // its exit rejects `ready` as well
      child.send(start);
      const { url, internalUrl } = await Promise.race([ready, failed]);
      return { url, internalUrl, child, cpuMicros: () => childCpuMicros(child) };
    };
    // One after the other: two apps/api starting together on a fresh database race to create
    // the same audit partition (`CREATE TABLE IF NOT EXISTS … PARTITION OF` is not safe against
    // a concurrent one) and one of them fails with "relation … already exists".
    for (const id of ids) {
      const dataDir = join(root, id);
      const env = { ...shared, PRIM_CELL_ID: id, PRIM_DATA_DIR: dataDir };
      cells.push({ id, dataDir, ...(await spawn(`cell ${id}`, { type: "start", env })) });
    }
    const startProxy = async (cell: CellProcess): Promise<ProxyProcess> => {
      const { url, cpuMicros } = await spawn("the bare forwarder", {
        type: "proxy",
        cellUrl: cell.internalUrl,
        secret: shared.PRIM_INTERNAL_SECRET,
      });
      return { url, cpuMicros };
    };
    return { cells, databaseUrl: database.url, startProxy, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<string> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${base}${path} → ${res.status} ${text}`);
  return text;
}

/**
 * Creates an Enterprise workspace (placed by `createWorkspace` on the least-loaded open cell),
 * group `bench`, kv `bench` and key `k` = `value` through the owner, and checks that both cells
 * answer the GET with the value while only the owner holds the workspace's files.
 */
export async function placeWorkspace(cluster: Cluster, value: string): Promise<Placed> {
  const pool = await openPool(cluster.databaseUrl, 1);
  let workspaceId: string;
  let key: string;
  let cell: string | undefined;
  try {
    const ws = await createWorkspace(pool, { name: "bench-cells", plan: "enterprise" });
    workspaceId = ws.workspace.id;
    key = ws.key;
    cell = (await readPlacement(pool, workspaceId))?.cell;
  } finally {
    await pool.end();
  }
  const owner = cluster.cells.find((c) => c.id === cell);
  const entry = cluster.cells.find((c) => c.id !== cell);
  if (owner === undefined || entry === undefined) throw new Error(`workspace placed on '${cell}', not on a bench cell`);
  await call(owner.url, key, "POST", "/v1/groups", { name: "bench" });
  const kv = JSON.parse(
    await call(owner.url, key, "POST", "/v1/primitives", { name: "bench", type: "kv", group: "bench" }),
  );
  const kvId = (kv as { id: string }).id;
  const path = `/v1/primitives/${kvId}/keys/k`;
  await call(owner.url, key, "PUT", path, { value });
  for (const c of [owner, entry]) {
    const got = JSON.parse(await call(c.url, key, "GET", path)) as { value?: unknown };
    if (got.value !== value) throw new Error(`GET through ${c.id} answered ${JSON.stringify(got)}`);
  }
  checkOnlyOwnerHasFiles({ workspaceId, owner, entry });
  return { workspaceId, key, owner, entry, kvId, path };
}

/** The entry cell must have forwarded, not served: it holds none of the workspace's files. */
export function checkOnlyOwnerHasFiles(p: Pick<Placed, "workspaceId" | "owner" | "entry">): void {
  if (existsSync(join(p.entry.dataDir, p.workspaceId))) {
    throw new Error(
      `cell ${p.entry.id} holds files of ${p.workspaceId}: it served the workspace instead of forwarding`,
    );
  }
  if (!existsSync(join(p.owner.dataDir, p.workspaceId))) {
    throw new Error(`owner ${p.owner.id} holds no files of ${p.workspaceId}`);
  }
}
