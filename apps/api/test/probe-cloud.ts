// The security probe's cloud (issue 35; probe-*.test.ts): api cells as real child processes in
// the production configuration — limits on, durable writes, blobs and archives in s3rver, the
// cells' shared secrets — over a fresh Postgres database and the machine's Redis, reached only
// through their public HTTP. The probes act as an attacker holding one workspace's key against
// another workspace; the control plane (workspaces, plans, keys) is set up through @prim/db as
// `prim admin` does.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createWorkspace,
  migrate,
  openPool,
  PLAN_CHANGED_PREFIX,
  planCacheKey,
  REVOKED_CHANNEL,
  readPlacement,
  setCellState,
  setPlan,
} from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import { call, startS3, TEST_BUCKET } from "@prim/testkit/cloud";
import { Redis } from "ioredis";
import type pg from "pg";
import { childEnv, type RunningProcess, startApiProcess } from "./cell-processes.js";

export interface ProbeCell {
  id: string;
  url: string;
  internalUrl: string;
  process: RunningProcess;
  /** The environment it was started with (a restart starts it again with the same). */
  env: NodeJS.ProcessEnv;
}

export interface ProbeWorkspace {
  id: string;
  /** Its account key (`pk_…`, every group and tool). */
  key: string;
  /** The cell it is placed on. */
  cell: string;
}

export type Plan = "starter" | "pro" | "enterprise";

export interface ProbeCloud {
  cells: ProbeCell[];
  /** The environment every cell shares (an operator's `prim admin` runs with it too). */
  env: Record<string, string>;
  pool: pg.Pool;
  redis: Redis;
  cell(id: string): ProbeCell;
  /**
   * A workspace with an account key. Enterprise ones get a rate no probe reaches (seeding is
   * not the attack); `on` places it on that cell (the others closed while it is made).
   */
  workspace(name: string, plan: Plan, options?: { on?: string }): Promise<ProbeWorkspace>;
  /** Changes a workspace's plan; the limiter sees it on the very next request. */
  setPlan(workspace: string, plan: Plan): Promise<void>;
  stop(): Promise<void>;
}

const FAST_ENTERPRISE = { rps: 10_000, burst: 10_000 };

/** Starts `cellIds` (two by default) as child processes, together. */
export async function startProbeCloud(
  label: string,
  cellIds: string[] = ["cell-a", "cell-b"],
  extraEnv: Record<string, string> = {},
): Promise<ProbeCloud> {
  const database = freshDatabase(label);
  await migrate({ databaseUrl: database.url });
  const s3 = await startS3();
  const root = mkdtempSync(join(tmpdir(), "prim-probe-"));
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: "redis://127.0.0.1:6379",
    PRIM_BLOBS: "s3",
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: TEST_BUCKET,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID as string,
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY as string,
    // The production settings, spelled out (they are the defaults).
    PRIM_LIMITS: "on",
    PRIM_DURABILITY: "durable",
    PRIM_INTERNAL_SECRET: randomBytes(24).toString("hex"),
    PRIM_MASTER_KEY: randomBytes(32).toString("hex"),
    PRIM_API_PORT: "0",
    PRIM_INTERNAL_PORT: "0",
    ...extraEnv,
  };
  const pool = await openPool(database.url);
  const redis = new Redis(env.REDIS_URL as string);
  const envOf = (id: string) => childEnv({ ...env, PRIM_CELL_ID: id, PRIM_DATA_DIR: join(root, id) });
  const started = await Promise.allSettled(cellIds.map((id) => startApiProcess(envOf(id), 90_000)));
  const cells = started.flatMap((s, i) =>
    s.status === "fulfilled"
      ? [
          {
            id: cellIds[i] as string,
            url: s.value.url,
            internalUrl: s.value.internalUrl,
            process: s.value,
            env: envOf(cellIds[i] as string),
          },
        ]
      : [],
  );
  const stop = async () => {
    for (const c of cells) await c.process.kill("SIGTERM");
    redis.disconnect();
    await pool.end();
    await s3.stop();
    await database.drop();
    rmSync(root, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  const cell = (id: string) => {
    const found = cells.find((c) => c.id === id);
    if (found === undefined) throw new Error(`no cell '${id}'`);
    return found;
  };
  return {
    cells,
    env,
    pool,
    redis,
    cell,
    async workspace(name, plan, options = {}) {
      const rate = plan === "enterprise" ? FAST_ENTERPRISE : {};
      const { on } = options;
      if (on !== undefined) for (const c of cells) await setCellState(pool, c.id, c.id === on ? "open" : "closed");
      try {
        const made = await createWorkspace(pool, { name, plan, ...rate });
        const placed = await readPlacement(pool, made.workspace.id);
        return { id: made.workspace.id, key: made.key, cell: placed?.cell as string };
      } finally {
        if (on !== undefined) for (const c of cells) await setCellState(pool, c.id, "open");
      }
    },
    async setPlan(workspace, plan) {
      const rate = plan === "enterprise" ? FAST_ENTERPRISE : {};
      // As `Revocations.planChanged` does: Redis's copy deleted, every process told.
      await setPlan(pool, { workspace, plan, ...rate }, async (ws) => {
        await redis.del(planCacheKey(ws));
        await redis.publish(REVOKED_CHANNEL, PLAN_CHANGED_PREFIX + ws);
      });
    },
    stop,
  };
}

/** A call that must succeed (the probes' setup): its body, or an Error naming what failed. */
export async function ok(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, any>> {
  const res = await call(base, key, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
