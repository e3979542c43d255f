import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CatalogHub, listPlacements } from "@prim/db";
import { workspaceTag } from "@prim/wire";
import { type EdgeCell, haproxyConfig, mapFileText } from "./haproxy-config.js";
import { HaproxyRuntime } from "./haproxy-runtime.js";
import { EdgeMapWatcher } from "./map-watcher.js";

/** Debian's package `haproxy` (2.6): CI installs it (.ci/run). */
export const HAPROXY_BIN = "/usr/sbin/haproxy";

export interface EdgeOptions {
  databaseUrl: string;
  cells: readonly EdgeCell[];
  bind: { host: string; port: number };
  /** Where haproxy.cfg, the map and the runtime socket go (made if missing). */
  dir: string;
  haproxyBin?: string;
  threads?: number;
  onError?: (err: unknown) => void;
}

export interface Edge {
  /** `http://host:port`: the public api, through HAProxy. */
  url: string;
  configFile: string;
  mapFile: string;
  runtime: HaproxyRuntime;
  watcher: EdgeMapWatcher;
  /** HAProxy's CPU time so far (user + system, µs), from /proc. */
  cpuMicros(): number;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** HAProxy's own CPU (µs) from /proc/<pid>/stat (utime + stime, in clock ticks of 10 ms). */
function procCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * HAProxy in front of `cells` (haproxy-config.ts) with its map watcher: the map file is written
 * from the placements before HAProxy starts (it serves tagged requests from its first one), the
 * watcher then resyncs over the runtime socket and follows the placement notices. HAProxy runs
 * in the foreground as this process's child (`-db`) and goes with `close`.
 */
export async function startEdge(options: EdgeOptions): Promise<Edge> {
  const bin = options.haproxyBin ?? HAPROXY_BIN;
  if (!existsSync(bin)) throw new Error(`HAProxy is not installed at ${bin} (Debian: apt-get install haproxy)`);
  mkdirSync(options.dir, { recursive: true });
  const configFile = join(options.dir, "haproxy.cfg");
  const mapFile = join(options.dir, "workspaces.map");
  const socket = join(options.dir, "runtime.sock");
  const hub = await CatalogHub.open(options.databaseUrl, { poolSize: 2 });
  let child: ChildProcess | undefined;
  let watcher: EdgeMapWatcher | undefined;
  const close = async () => {
    await watcher?.close().catch(() => {});
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child?.once("exit", resolve));
      child.kill("SIGUSR1"); // a soft stop: requests in flight finish
      await Promise.race([exited, sleep(3_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    await hub.close();
  };
  try {
    const known = new Set(options.cells.map((c) => c.id));
    const placed = (await listPlacements(hub.pool)).flatMap(({ workspace, cell }) => {
      const tag = workspaceTag(workspace);
      return tag !== null && known.has(cell) ? [{ tag, cell }] : [];
    });
    writeFileSync(mapFile, mapFileText(placed));
    writeFileSync(
      configFile,
      haproxyConfig({ bind: options.bind, cells: options.cells, mapFile, socket, threads: options.threads }),
    );
    const started = spawn(bin, ["-db", "-f", configFile], { stdio: ["ignore", "ignore", "pipe"] });
    child = started;
    let stderr = "";
    started.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const runtime = new HaproxyRuntime(socket);
    for (let i = 0; ; i++) {
      if (started.exitCode !== null) throw new Error(`haproxy exited (${started.exitCode}): ${stderr.trim()}`);
      if (existsSync(socket) && (await runtime.command("show info").catch(() => "")).includes("Pid:")) break;
      if (i > 200) throw new Error(`haproxy did not open its runtime socket: ${stderr.trim()}`);
      await sleep(25);
    }
    watcher = await EdgeMapWatcher.start({
      pool: hub.pool,
      hub,
      runtime,
      mapFile,
      cells: options.cells.map((c) => c.id),
      onError: options.onError,
    });
    const host = options.bind.host.includes(":") ? `[${options.bind.host}]` : options.bind.host;
    const pid = started.pid as number;
    return {
      url: `http://${host}:${options.bind.port}`,
      configFile,
      mapFile,
      runtime,
      watcher,
      cpuMicros: () => procCpuMicros(pid),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
