// Child process for bench/cloud-kv.ts: `prim dev` and apps/api (the cloud: catalog, keys and
// audit in the machine's Postgres, revocations on its Redis) side by side, each over its own
// temp directory, so the load generator (parent) does not share a core with them.
// Protocol over IPC:
//   child → parent  { type: "ready", localPort, cloudPort, key }
//   parent → child  { type: "cpu" }   child → parent { type: "cpu", user, system }  (µs)
//   parent → child  { type: "stop" }  child closes both, drops its database and exits
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiApp, readApiEnv } from "@prim/api";
import { startDevServer } from "@prim/cli";
import { createWorkspace, migrate } from "@prim/db";
import pg from "pg";
import { serveParent } from "./lib/serve-parent.js";

export type ParentMessage = { type: "cpu" } | { type: "stop" };
export type ChildMessage =
  | { type: "ready"; localPort: number; cloudPort: number; key: string }
  | { type: "cpu"; user: number; system: number };

const HOST = "127.0.0.1";
const PG_ROOT = process.env.PRIM_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";

async function dropDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${PG_ROOT}/postgres` });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-cloud-kv-"));
  const database = `prim_bench_cloud_kv_${randomBytes(4).toString("hex")}`;
  const databaseUrl = `${PG_ROOT}/${database}`;
  await migrate({ databaseUrl });
  const local = await startDevServer({ port: 0, host: HOST, dataDir: join(dir, "local") });
  const cloud = await createApiApp(
    readApiEnv({
      DATABASE_URL: databaseUrl,
      PRIM_DATA_DIR: join(dir, "cloud"),
      PRIM_BLOBS: `local:${join(dir, "blobs")}`,
      PRIM_API_PORT: "0",
    }),
  );
  await cloud.app.listen({ port: 0, host: HOST });
  const address = cloud.app.server.address();
  const cloudPort = typeof address === "object" && address !== null ? address.port : 0;
  // An Enterprise workspace with a rate no load here reaches, so no limit refuses a request.
  const ws = await createWorkspace(cloud.hub.pool, {
    name: "bench",
    plan: "enterprise",
    rps: 1_000_000,
    burst: 1_000_000,
  });

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await Promise.allSettled([local.close(), cloud.close()]);
    await dropDatabase(database).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  serveParent({ stop });
  process.send?.({ type: "ready", localPort: local.port, cloudPort, key: ws.key } satisfies ChildMessage);
}

main().catch((err: unknown) => {
  console.error("cloud-kv-server:", err);
  process.exit(1);
});
