import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Whether a process with this pid runs (one we may not signal still runs). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * One engine owns a data directory at a time: `engine.lock` holds its pid. The engine caches
 * catalog state in memory, so a second writer would serve stale answers. A lock left by a
 * process that no longer runs (a crash) is taken over.
 */
export class DataDirLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string): DataDirLock {
    const path = join(dataDir, "engine.lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, "wx", 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new DataDirLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const holder = Number(readFileSync(path, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new Error(`data directory ${dataDir} is in use by process ${holder} (another prim dev?)`);
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
    throw new Error(`could not lock data directory ${dataDir}`);
  }

  release(): void {
    rmSync(this.path, { force: true });
  }
}
