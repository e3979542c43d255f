// Child process for bench/cloud-kv.ts and bench/limits.ts: two REST servers side by side over
// their own temp directories and one fresh Postgres database (dropped at the end), so the load
// generator (parent) does not share a core with them.
//   mode `local` (default): baseline `prim dev`, target apps/api (limits on)
//   mode `limits`:          baseline apps/api with PRIM_LIMITS=off, target apps/api (limits on)
//   mode `mcp`:             baseline `prim dev` (its /mcp/<group>), target apps/api with its
//                           internal listener (`internal`: url and secret, for apps/mcp,
//                           which the parent runs in a process of its own, as in production)
// Each apps/api serves its own Enterprise workspace whose rate no load here reaches, so every
// request runs the limits script and none is refused.
// Protocol over IPC:
//   child → parent  { type: "ready", baseline: { port, key }, target: { port, key } }
//   parent → child  { type: "cpu" }   child → parent { type: "cpu", user, system }  (µs)
//   parent → child  { type: "stop" }  child closes both, drops its database and exits
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ApiApp, createApiApp, readApiEnv } from "@prim/api";
import { startDevServer } from "@prim/cli";
import { createWorkspace, migrate } from "@prim/db";
import { listenInternal } from "@prim/http";
import { freshDatabase } from "@prim/testkit";
import { serveParent } from "./lib/serve-parent.js";

export interface Endpoint {
  port: number;
  /** The workspace key to send, or null for tokenless `prim dev`. */
  key: string | null;
  /** mode `mcp`: the cell's internal listener, for an apps/mcp process. */
  internal?: { url: string; secret: string; databaseUrl: string };
}
export type ParentMessage = { type: "cpu" } | { type: "stop" };
export type ChildMessage =
  | { type: "ready"; baseline: Endpoint; target: Endpoint }
  | { type: "cpu"; user: number; system: number };

const HOST = "127.0.0.1";
async function main(): Promise<void> {
  const mode = process.argv[2] === "limits" || process.argv[2] === "mcp" ? process.argv[2] : "local";
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-cloud-"));
  const database = freshDatabase("bench_cloud"); // on PRIM_TEST_PG, else the machine's Postgres
  const databaseUrl = database.url;
  await migrate({ databaseUrl });
  const closers: (() => Promise<void>)[] = [];

  const secret = randomBytes(24).toString("hex");
  // Two apps over one database share one master key (the OAuth signing key is wrapped with it).
  const masterKey = randomBytes(32).toString("hex");
  let internalUrl = "";
  const cloud = async (name: string, limits: "on" | "off"): Promise<Endpoint> => {
    const api: ApiApp = await createApiApp(
      readApiEnv({
        DATABASE_URL: databaseUrl,
        PRIM_DATA_DIR: join(dir, name),
        PRIM_BLOBS: `local:${join(dir, `${name}-blobs`)}`,
        PRIM_API_PORT: "0",
        PRIM_LIMITS: limits,
        PRIM_INTERNAL_SECRET: secret,
        PRIM_MASTER_KEY: masterKey,
      }),
    );
    if (api.internal !== undefined) internalUrl = await listenInternal(api.internal);
    closers.push(() => api.close());
    await api.app.listen({ port: 0, host: HOST });
    const address = api.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const ws = await createWorkspace(api.hub.pool, { name, plan: "enterprise", rps: 1_000_000, burst: 1_000_000 });
    return { port, key: ws.key };
  };

  let baseline: Endpoint;
  if (mode === "local" || mode === "mcp") {
    const local = await startDevServer({ port: 0, host: HOST, dataDir: join(dir, "local") });
    closers.push(() => local.close());
    baseline = { port: local.port, key: null };
  } else {
    baseline = await cloud("limits-off", "off");
  }
  const target = await cloud("limits-on", "on");
  if (mode === "mcp") target.internal = { url: internalUrl, secret, databaseUrl };

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await Promise.allSettled(closers.map((close) => close()));
    await database.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  serveParent({ stop });
  process.send?.({ type: "ready", baseline, target } satisfies ChildMessage);
}

main().catch((err: unknown) => {
  console.error("cloud-kv-server:", err);
  process.exit(1);
});
