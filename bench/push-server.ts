// Child process for bench/push.ts: the cloud's apps/api on loopback over a temp directory and
// a fresh Postgres database (dropped at the end), with one Enterprise workspace and its key, so
// the pushing CLI (the parent's child) does not share a core's event loop with it.
// Protocol over IPC:
//   child → parent  { type: "ready", port, key, dataDir }
//   parent → child  { type: "stop" }  child closes, drops its database and exits
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiApp, readApiEnv } from "@prim/api";
import { createWorkspace, migrate } from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import { serveParent } from "./lib/serve-parent.js";

export type ParentMessage = { type: "stop" };
export type ChildMessage = { type: "ready"; port: number; key: string; dataDir: string };

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-push-cloud-"));
  const database = freshDatabase("bench_push");
  await migrate({ databaseUrl: database.url });
  const api = await createApiApp(
    readApiEnv({
      DATABASE_URL: database.url,
      PRIM_DATA_DIR: join(dir, "cells"),
      PRIM_BLOBS: `local:${join(dir, "blobs")}`,
      PRIM_API_PORT: "0",
    }),
  );
  await api.app.listen({ port: 0, host: "127.0.0.1" });
  const address = api.app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const ws = await createWorkspace(api.hub.pool, {
    name: "bench",
    plan: "enterprise",
    rps: 1_000_000,
    burst: 1_000_000,
  });
  let stopping = false;
  serveParent({
    stop: async () => {
      if (stopping) return;
      stopping = true;
      await api.close().catch(() => {});
      await database.drop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    },
  });
  process.send?.({ type: "ready", port, key: ws.key, dataDir: dir } satisfies ChildMessage);
}

main().catch((err: unknown) => {
  console.error("push-server:", err);
  process.exit(1);
});
