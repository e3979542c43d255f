// The disk a power-loss test runs on, and the power cut itself.
//
// Prim's data lives on an ext4 file system in an image file ("inner"), attached to a loop
// device. That image in turn lives on a second loop-mounted ext4 ("outer"), so that the cut can
// freeze the outer file system: from that instant the loop device's writes into the inner image
// block (reads still work), and a copy of the image holds exactly what had reached the "device"
// at the cut — fsynced data and whatever the kernel happened to write back — and none of the
// dirty pages the inner ext4 still caches. Without the freeze, the inner file system's writeback
// and journal commits could land while the copy is being read, tearing it across two instants.
// The copy is checked with e2fsck and mounted on a third loop device for the restart; the
// original is unmounted (which flushes its cache into it, so it is never looked at again).
//
// What survives a cut on ext4: a change to the tree (a new name, a rename) is durable once a
// journal commit holds it. ext4 has one journal, and a commit takes every change made before it
// along: a directory's fsync always commits, a file's fsync commits when the file's own metadata
// changed (fdatasync: its size or blocks). So a missing directory fsync shows only when nothing
// else commits between the change and the cut — a name made by a rename after the file's last
// fsync (a blob moved into place, a restored snapshot), with no commit after it.
import { type ChildProcess, execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { exited, gone } from "./write-lanes.js";

const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// The tools live in sbin, which a non-login shell's PATH may leave out.
const SEARCH = [...(process.env.PATH ?? "").split(delimiter), "/sbin", "/usr/sbin"].filter(Boolean);
const env = { ...process.env, PATH: SEARCH.join(delimiter) };
const TOOLS = ["mount", "umount", "losetup", "mkfs.ext4", "e2fsck", "fsfreeze", "cp", "truncate", "sync"];
/**
 * How prim's file system is mounted, before and after the cut. data=ordered (ext4's default,
 * spelled out so a changed default cannot weaken the test): a commit writes the data of newly
 * allocated blocks first, never a name pointing at garbage. noauto_da_alloc: without it, ext4
 * writes a file's data before committing a rename over another file or a truncation — a
 * heuristic for programs that forget the fsync, which would hide prim forgetting one.
 */
const DATA_MOUNT = "noauto_da_alloc,data=ordered";

/**
 * Why power-loss tests cannot run here, or null when they can: loop devices, mounts and
 * fsfreeze need root on Linux and util-linux and e2fsprogs installed. CI runs as root, so there
 * they always run.
 */
export function powerLossUnsupported(): string | null {
  if (process.platform !== "linux") return "loop devices need Linux";
  if (process.getuid?.() !== 0) return "mount, losetup and fsfreeze need root";
  const missing = TOOLS.filter((tool) => !SEARCH.some((dir) => existsSync(join(dir, tool))));
  return missing.length === 0 ? null : `not installed: ${missing.join(", ")}`;
}

async function run(command: string, args: string[]): Promise<string> {
  try {
    return (await exec(command, args, { env })).stdout;
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(" ")}: ${String(err)}\n${stdout ?? ""}${stderr ?? ""}`);
  }
}

/** A mounted loop device, unwound in reverse order. */
interface Mount {
  device: string;
  point: string;
}

export class PowerDisk {
  private readonly mounts: Mount[] = [];
  private frozen: string | null = null;

  private constructor(
    /** A temporary directory on the host's disk holding the images and mount points. */
    readonly dir: string,
  ) {}

  private get outer(): string {
    return join(this.dir, "outer");
  }

  private get innerImage(): string {
    return join(this.outer, "inner.img");
  }

  private get copyImage(): string {
    return join(this.dir, "after-power-loss.img");
  }

  /** Sparse images, so they cost only what is written. */
  static async create(): Promise<PowerDisk> {
    const disk = new PowerDisk(mkdtempSync(join(tmpdir(), "prim-power-")));
    try {
      await disk.attach(join(disk.dir, "outer.img"), "2G", disk.outer);
      await disk.attach(disk.innerImage, "1G", join(disk.dir, "disk"), DATA_MOUNT);
    } catch (err) {
      await disk.dispose();
      throw err;
    }
    return disk;
  }

  /** Where prim's data directory goes before the cut. */
  get data(): string {
    return join(this.dir, "disk", "data");
  }

  /** Where the data directory is after the cut, once `recover` has mounted the copy. */
  get recovered(): string {
    return join(this.dir, "after", "data");
  }

  /** Flushes the inner file system to its device, as `sync` would (a baseline before a cut). */
  async sync(): Promise<void> {
    await run("sync", ["--file-system", this.data]);
  }

  /**
   * Cuts the power: freezes the device under the inner file system, calls `kill` (which only
   * sends signals: a process waiting on an fsync cannot finish dying until the thaw), copies the
   * image, thaws. Everything the processes do after the freeze never reaches the copy.
   */
  private async cut(kill: () => void): Promise<void> {
    await run("fsfreeze", ["--freeze", this.outer]);
    this.frozen = this.outer;
    try {
      kill();
      await run("cp", ["--sparse=always", this.innerImage, this.copyImage]);
    } finally {
      await this.thaw();
    }
  }

  /**
   * Cuts the power under a running prim: at the freeze, `atCut` runs and prim and its SQL hosts
   * are SIGKILLed (their pids go to `orphans`, for the test's cleanup should they outlive it);
   * once they are gone, what the disk kept is mounted at `recovered`.
   */
  async cutUnder(prim: ChildProcess, orphans: number[], atCut: () => void = () => {}): Promise<void> {
    const pid = prim.pid as number;
    await this.cut(() => {
      atCut();
      const everything = [pid, ...descendants(pid)]; // SQL hosts die with the power too
      orphans.push(...everything.slice(1));
      for (const target of everything) process.kill(target, "SIGKILL");
    });
    await exited(prim);
    for (let t = 0; t < 100 && orphans.some((h) => !gone(h)); t++) await sleep(100);
    await this.discardOriginal();
    await this.recover();
  }

  /** Unmounts and deletes the original disk (call once the processes that used it are gone). */
  private async discardOriginal(): Promise<void> {
    await this.unwind();
    rmSync(join(this.dir, "outer.img"), { force: true });
  }

  /** Repairs the copy as a boot after a power cut would (journal replay, e2fsck) and mounts it. */
  private async recover(): Promise<void> {
    // Exit codes 0-2: consistent now (1 and 2: after repairs); 4 and up: still broken.
    const fsck = await exec("e2fsck", ["-fy", this.copyImage], { env }).then(
      () => ({ code: 0, output: "" }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, output: err.stdout + err.stderr }),
    );
    if (fsck.code >= 4) throw new Error(`e2fsck could not repair the copy (exit ${fsck.code}):\n${fsck.output}`);
    await this.mount(this.copyImage, join(this.dir, "after"), DATA_MOUNT);
  }

  /** Every SQLite file of the recovered data directory, each with its integrity_check answer ("ok" when sound). */
  integrity(): [string, unknown][] {
    return readdirSync(this.recovered, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".sqlite"))
      .map((f) => {
        const sqlite = new Database(join(this.recovered, f));
        try {
          return [f, sqlite.pragma("integrity_check", { simple: true })];
        } finally {
          sqlite.close();
        }
      });
  }

  /** Thaws, unmounts and detaches everything, deletes the images; safe to call at any point. */
  async dispose(): Promise<void> {
    try {
      await this.thaw();
    } finally {
      await this.unwind();
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /** `options`: mount options (`mount -o`); none for the outer file system. */
  private async attach(image: string, size: string, point: string, options?: string): Promise<void> {
    await run("truncate", ["-s", size, image]);
    // Inode tables and journal zeroed now, not by a background thread during the test.
    await run("mkfs.ext4", ["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image]);
    await this.mount(image, point, options);
  }

  private async mount(image: string, point: string, options?: string): Promise<void> {
    mkdirSync(point, { recursive: true });
    const device = (await run("losetup", ["--find", "--show", image])).trim();
    try {
      await run("mount", options === undefined ? [device, point] : ["-o", options, device, point]);
    } catch (err) {
      await run("losetup", ["--detach", device]).catch(() => {});
      throw err;
    }
    this.mounts.push({ device, point });
  }

  private async thaw(): Promise<void> {
    if (this.frozen === null) return;
    await run("fsfreeze", ["--unfreeze", this.frozen]);
    this.frozen = null;
  }

  /** Unmounts and detaches every mount, innermost first. */
  private async unwind(): Promise<void> {
    while (this.mounts.length > 0) {
      const { device, point } = this.mounts.pop() as Mount;
      // A process that still holds a file open (it should be dead by now) must not leave the
      // mount behind: detach lazily, and the loop device goes when the last user does.
      await run("umount", [point]).catch(() => run("umount", ["--lazy", point]).catch(() => {}));
      await run("losetup", ["--detach", device]).catch(() => {});
    }
  }
}

/** The pids of every process under `pid` (SQL hosts, tsx's esbuild), children before theirs. */
export function descendants(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  // A child hangs under the thread that forked it, not always the main one.
  const direct = tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  return direct.flatMap((child) => [child, ...descendants(child)]);
}
