// Child process for bench/storage.ts: the real local engine on a fresh data directory, so the
// load generator and file-system baseline (parent) do not share an event loop with it.
// Protocol over IPC:
//   child → parent  { type: "ready", port, dataDir }
//   parent → child  { type: "cpu" }    child → parent { type: "cpu", user, system }  (µs)
//   parent → child  { type: "stop" }   child closes the engine, removes its data and exits
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDevServer } from "@prim/cli";
import { serveParent } from "./lib/serve-parent.js";

export type ParentMessage = { type: "cpu" } | { type: "stop" };

export type ChildMessage =
  | { type: "ready"; port: number; dataDir: string }
  | { type: "cpu"; user: number; system: number };

function send(message: ChildMessage): void {
  if (process.send === undefined) throw new Error("storage-server.ts must be started with an IPC channel (fork)");
  process.send(message);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "prim-bench-storage-"));
  const engine = await startDevServer({ port: 0, host: "127.0.0.1", dataDir });

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await engine.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  };

  serveParent({ stop });

  send({ type: "ready", port: engine.port, dataDir });
}

main().catch((err: unknown) => {
  console.error("storage-server:", err);
  process.exit(1);
});
