// Cells over one Postgres database, in this process, as production runs them: each an api app
// with its own data directory, public and internal listeners, a cell id and the cells' shared
// secrets; blobs and archives in one s3rver; limits on; durable writes (CLOUD.md, "Scale-out";
// infra/k8s/base/config.yaml). A suite that needs something else passes it in `extraEnv`, with
// a one-line reason where it does.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ApiApp, type ApiAppOptions, createApiApp, readApiEnv } from "@prim/api";
import { createWorkspace, migrate } from "@prim/db";
import { listenInternal } from "@prim/http";
import type pg from "pg";
import { freshDatabase } from "../pg.js";
import { startS3, TEST_BUCKET } from "./s3.js";

export interface TestCellNode {
  id: string;
  url: string;
  internalUrl: string;
  api: ApiApp;
  dataDir: string;
}

export interface TestCells {
  cells: TestCellNode[];
  databaseUrl: string;
  env: Record<string, string>;
  /** Starts (or restarts, same data directory) cell `id`. */
  start(id: string): Promise<TestCellNode>;
  /** Closes cell `id` (its files stay). */
  stopCell(id: string): Promise<void>;
  stop(): Promise<void>;
}

export interface TestCellOptions extends ApiAppOptions {
  /** Called with each cell's app before it listens (e.g. to record its responses). */
  beforeListen?: (api: ApiApp, id: string) => void;
  /** The first cell's public port (default: any free one). */
  port?: number;
}

/**
 * Limits: Redis answers slower than this count as an outage. Production uses 50 ms; on this
 * 2-core machine under a full suite Redis sometimes answers later, and a process limiting alone
 * would change what a suite sees (the outage suites set their own).
 */
const TEST_REDIS_TIMEOUT_MS = 2_000;

export async function startCells(
  label: string,
  ids: string[],
  extraEnv: Record<string, string> = {},
  options: TestCellOptions = {},
): Promise<TestCells> {
  const db = freshDatabase(label);
  await migrate({ databaseUrl: db.url });
  const s3 = await startS3();
  const root = mkdtempSync(join(tmpdir(), "prim-cells-"));
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    PRIM_BLOBS: "s3",
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: TEST_BUCKET,
    PRIM_API_PORT: "0",
    PRIM_LIMITS: "on",
    PRIM_DURABILITY: "durable",
    // Archives are shipped by the suites about them (cells-crash), not every 5 minutes.
    PRIM_SHIP_INTERVAL_S: "0",
    PRIM_INTERNAL_SECRET: randomBytes(24).toString("hex"),
    PRIM_MASTER_KEY: randomBytes(32).toString("hex"),
    ...extraEnv,
  };
  const { beforeListen, port, ...appOptions } = options;
  const limits = { timeoutMs: TEST_REDIS_TIMEOUT_MS, ...appOptions.limits };
  const nodes = new Map<string, TestCellNode>();
  const start = async (id: string): Promise<TestCellNode> => {
    const dataDir = join(root, id);
    const api = await createApiApp(readApiEnv({ ...env, PRIM_CELL_ID: id, PRIM_DATA_DIR: dataDir }), {
      ...appOptions,
      limits,
    });
    beforeListen?.(api, id);
    const first = nodes.size === 0;
    const url = await api.app.listen({ port: first ? (port ?? 0) : 0, host: "127.0.0.1" });
    const internalUrl = await listenInternal(api.internal as NonNullable<ApiApp["internal"]>, { port: 0 });
    await api.cellService.announce(internalUrl);
    const node = { id, url, internalUrl, api, dataDir };
    nodes.set(id, node);
    return node;
  };
  const stop = async () => {
    for (const node of [...nodes.values()].reverse()) await node.api.close();
    nodes.clear();
    await db.drop();
    await s3.stop();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const id of ids) await start(id);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    get cells() {
      return [...nodes.values()];
    },
    databaseUrl: db.url,
    env,
    start,
    stopCell: async (id) => {
      await nodes.get(id)?.api.close();
      nodes.delete(id);
    },
    stop,
  };
}

/** A rate no suite reaches: limits stay on, and seeding is not what a suite tests. */
export const FAST_ENTERPRISE = { plan: "enterprise", rps: 100_000, burst: 100_000 } as const;

/** An Enterprise workspace at `FAST_ENTERPRISE`'s rate, with its account key. */
export function fastWorkspace(pool: pg.Pool, name: string) {
  return createWorkspace(pool, { name, ...FAST_ENTERPRISE });
}
