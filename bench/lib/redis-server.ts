// A private redis-server for bench/queue.ts: its own port and temporary directory, so the
// benchmark chooses its persistence settings without touching the machine's shared Redis.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  port: number;
  /** The settings it was started with, for the report. */
  persistence: string;
  stop(): Promise<void>;
}

/** A port nothing listens on right now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * Starts `redis-server` (`BENCH_REDIS_SERVER`, default from PATH) with `--appendonly yes
 * --appendfsync everysec` when `aof`, else with no persistence at all (`--appendonly no`,
 * `--save ""`); RDB snapshots are off in both. Resolves once it accepts connections.
 */
export async function startRedis(aof: boolean): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "prim-bench-redis-"));
  const persistence = aof ? "appendonly yes, appendfsync everysec" : "no persistence";
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push(...(aof ? ["--appendonly", "yes", "--appendfsync", "everysec"] : ["--appendonly", "no"]));
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: benchmark knob, not a turbo task input
  const child: ChildProcess = spawn(process.env.BENCH_REDIS_SERVER ?? "redis-server", args, {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    let log = "";
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes("Ready to accept connections")) resolve();
    });
  });
  child.removeAllListeners("exit");
  child.stdout?.resume(); // keep draining its log so it never blocks on a full pipe
  return {
    port,
    persistence,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
