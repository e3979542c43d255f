import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "@prim/engine";

/**
 * `engine.json` in the data directory tells other local tools (`prim mcp`) where the engine
 * that owns the directory answers. Written by `prim dev` once it listens, removed on close.
 */
export interface RunningEngine {
  pid: number;
  url: string;
}

const fileOf = (dataDir: string) => join(dataDir, "engine.json");

export function writeEngineFile(dataDir: string, engine: RunningEngine): void {
  writeFileSync(fileOf(dataDir), `${JSON.stringify(engine)}\n`, { mode: 0o600 });
}

export function removeEngineFile(dataDir: string): void {
  rmSync(fileOf(dataDir), { force: true });
}

/** The engine serving `dataDir`, if one runs (a file left by a dead process is ignored). */
export function runningEngine(dataDir: string): RunningEngine | null {
  try {
    const parsed = JSON.parse(readFileSync(fileOf(dataDir), "utf8")) as RunningEngine;
    return Number.isInteger(parsed.pid) && typeof parsed.url === "string" && processAlive(parsed.pid) ? parsed : null;
  } catch {
    return null;
  }
}
