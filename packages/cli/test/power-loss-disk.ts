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
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);
// The tools live in sbin, which a non-login shell's PATH may leave out.
const SEARCH = [...(process.env.PATH ?? "").split(delimiter), "/sbin", "/usr/sbin"].filter(Boolean);
const env = { ...process.env, PATH: SEARCH.join(delimiter) };
const TOOLS = ["mount", "umount", "losetup", "mkfs.ext4", "e2fsck", "fsfreeze", "cp", "truncate", "sync"];

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
      await disk.attach(disk.innerImage, "1G", join(disk.dir, "disk"));
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
  async cut(kill: () => void): Promise<void> {
    await run("fsfreeze", ["--freeze", this.outer]);
    this.frozen = this.outer;
    try {
      kill();
      await run("cp", ["--sparse=always", this.innerImage, this.copyImage]);
    } finally {
      await this.thaw();
    }
  }

  /** Unmounts and deletes the original disk (call once the processes that used it are gone). */
  async discardOriginal(): Promise<void> {
    await this.unwind();
    rmSync(join(this.dir, "outer.img"), { force: true });
  }

  /** Repairs the copy as a boot after a power cut would (journal replay, e2fsck) and mounts it. */
  async recover(): Promise<void> {
    // Exit codes 0-2: consistent now (1 and 2: after repairs); 4 and up: still broken.
    const fsck = await exec("e2fsck", ["-fy", this.copyImage], { env }).then(
      () => ({ code: 0, output: "" }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, output: err.stdout + err.stderr }),
    );
    if (fsck.code >= 4) throw new Error(`e2fsck could not repair the copy (exit ${fsck.code}):\n${fsck.output}`);
    await this.mount(this.copyImage, join(this.dir, "after"));
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

  private async attach(image: string, size: string, point: string): Promise<void> {
    await run("truncate", ["-s", size, image]);
    // Inode tables and journal zeroed now, not by a background thread during the test.
    await run("mkfs.ext4", ["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image]);
    await this.mount(image, point);
  }

  private async mount(image: string, point: string): Promise<void> {
    mkdirSync(point, { recursive: true });
    const device = (await run("losetup", ["--find", "--show", image])).trim();
    try {
      await run("mount", [device, point]);
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
