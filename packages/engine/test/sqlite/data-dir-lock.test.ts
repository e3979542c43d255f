// The data-directory lock with real processes: the OS releases it when its holder dies (even a
// zombie nobody reaped), exactly one of several racing processes gets it, and a live holder is
// named in the refusal.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirLock } from "../../src/sqlite/data-dir-lock.js";
import { tempDir } from "../helpers.js";

const HOLDER = fileURLToPath(new URL("./lock-holder.ts", import.meta.url));
const children: ChildProcess[] = [];
const zombies: number[] = [];

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const pid of zombies.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** Runs the holder script through `sh`, which never reaps it: once killed it stays a zombie. */
function unreapedHolder(dataDir: string): Promise<{ pid: number; line: string }> {
  const sh = spawn(
    "sh",
    ["-c", `${process.execPath} --import tsx ${HOLDER} ${dataDir} & echo "pid $!"; exec sleep 600`],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  children.push(sh);
  return firstLines(sh, 2).then(([pidLine, line]) => ({ pid: Number(pidLine?.split(" ")[1]), line: line as string }));
}

function holder(dataDir: string, startAt = 0): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", HOLDER, dataDir, String(startAt)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return child;
}

function firstLines(child: ChildProcess, n: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split("\n");
      if (lines.length > n) resolve(lines.slice(0, n));
    });
    child.on("exit", () => reject(new Error(`exited before ${n} lines: ${out}`)));
  });
}

function processState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] ?? "?";
}

describe("data-directory lock", () => {
  it("is free the moment its holder is SIGKILLed, though the holder is still an unreaped zombie", async () => {
    const dir = tempDir();
    const { pid, line } = await unreapedHolder(dir);
    expect(line).toBe(`held ${pid}`);
    expect(() => DataDirLock.acquire(dir)).toThrow(`data directory ${dir} is in use by process ${pid}`);

    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 100 && processState(pid) !== "Z"; i++) await new Promise((r) => setTimeout(r, 20));
    expect(processState(pid)).toBe("Z"); // dead but not reaped: its pid still answers kill(pid, 0)
    zombies.push(pid);

    const lock = DataDirLock.acquire(dir);
    expect(readFileSync(join(dir, "engine.pid"), "utf8")).toBe(String(process.pid));
    lock.release();
  });

  it("names a live holder's pid when refusing", async () => {
    const dir = tempDir();
    const child = holder(dir);
    const [line] = await firstLines(child, 1);
    expect(line).toBe(`held ${child.pid}`);
    expect(() => DataDirLock.acquire(dir)).toThrow(
      `data directory ${dir} is in use by process ${child.pid} (another prim dev?)`,
    );
  });

  it("gives a free or stale lock to exactly one of six processes racing for it", { timeout: 60_000 }, async () => {
    for (const stale of [false, true]) {
      const dir = tempDir();
      if (stale) {
        // What a crashed engine leaves: a pid file and the old-style lock file naming a dead pid.
        writeFileSync(join(dir, "engine.pid"), "999999999");
        writeFileSync(join(dir, "engine.lock"), "999999999");
      }
      const startAt = Date.now() + 3000; // after every racer's start-up
      const racers = Array.from({ length: 6 }, () => holder(dir, startAt));
      const lines = (await Promise.all(racers.map((r) => firstLines(r, 1)))).map(([l]) => l as string);
      const held = lines.filter((l) => l.startsWith("held "));
      expect(held, lines.join("\n")).toHaveLength(1);
      const winner = Number(held[0]?.split(" ")[1]);
      for (const l of lines.filter((l) => !l.startsWith("held "))) {
        expect(l).toMatch(new RegExp(`^busy data directory .* is in use by (process ${winner}|another process)`));
      }
      for (const r of racers) r.kill("SIGKILL");
    }
  });

  it("tightens an older, world-readable data directory to 0700", () => {
    const dir = tempDir();
    const lock = DataDirLock.acquire(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "engine-lock.sqlite")).mode & 0o777).toBe(0o600);
    lock.release();
    expect(() => DataDirLock.acquire(dir).release()).not.toThrow();
  });
});
