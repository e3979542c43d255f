// Several cells over one Postgres database, in this process: each an api app with its own data
// directory, public and internal listeners, a cell id and the cells' shared secrets; blobs and
// archives in one s3rver (CLOUD.md, "Scale-out").
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "@prim/db";
import { listenInternal } from "@prim/http";
import { freshDatabase } from "../../../packages/db/test/pg.js";
import { type ApiApp, createApiApp, readApiEnv } from "../src/index.js";
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

export async function startCells(
  label: string,
  ids: string[],
  extraEnv: Record<string, string> = {},
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
    PRIM_LIMITS: "off",
    PRIM_SHIP_INTERVAL_S: "0",
    PRIM_INTERNAL_SECRET: randomBytes(24).toString("hex"),
    PRIM_MASTER_KEY: randomBytes(32).toString("hex"),
    ...extraEnv,
  };
  const nodes = new Map<string, TestCellNode>();
  const start = async (id: string): Promise<TestCellNode> => {
    const dataDir = join(root, id);
    const api = await createApiApp(readApiEnv({ ...env, PRIM_CELL_ID: id, PRIM_DATA_DIR: dataDir }));
    const url = await api.app.listen({ port: 0, host: "127.0.0.1" });
    const internalUrl = await listenInternal(api.internal as NonNullable<ApiApp["internal"]>, { port: 0 });
    await api.cellService.announce(internalUrl);
    const node = { id, url, internalUrl, api, dataDir };
    nodes.set(id, node);
    return node;
  };
  for (const id of ids) await start(id);
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
    stop: async () => {
      for (const node of nodes.values()) await node.api.close();
      await db.drop();
      await s3.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
