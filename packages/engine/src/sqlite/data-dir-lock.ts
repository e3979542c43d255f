import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { PRIVATE_FILE_MODE, privateDir, privateFile } from "./private-files.js";

/** Whether a process with this pid runs (one we may not signal still runs). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const LOCK_FILE = "engine-lock.sqlite";
const PID_FILE = "engine.pid";
/** The pid file of versions before the OS-held lock; still honoured while its process runs. */
const LEGACY_LOCK_FILE = "engine.lock";
/**
 * How long a start waits for the lock. A killed process's files close as its last thread
 * exits, a few milliseconds after the signal; a restart right after a supervisor's KILL should
 * not fail on that. A live holder is reported after this wait.
 */
const LOCK_WAIT_MS = 1000;

/**
 * One engine owns a data directory at a time. The engine caches catalog state in memory, so a
 * second writer would serve stale answers.
 *
 * The lock is an exclusive SQLite lock on `engine-lock.sqlite`, held for the engine's life
 * (`locking_mode=EXCLUSIVE` keeps the lock a write transaction took). SQLite takes it with an
 * fcntl lock, which the kernel drops the moment the process dies — SIGKILL, crash, or a
 * zombie its parent has not reaped yet — and which exactly one process can hold, however many
 * race for it. A pid file cannot do either: a killed engine's pid still "runs" until it is
 * reaped, and two processes can both judge the same stale file dead and both take over.
 * (Node has no flock; better-sqlite3 is already a dependency and SQLite's locking is proven.)
 *
 * Others cannot read a database held exclusively, so the holder also writes its pid to
 * `engine.pid`, only to name it in the "in use" message.
 */
export class DataDirLock {
  private constructor(
    private readonly db: Database.Database,
    private readonly pidPath: string,
  ) {}

  static acquire(dataDir: string): DataDirLock {
    privateDir(dataDir); // a directory from an older version is tightened to 0700 here
    const db = new Database(privateFile(join(dataDir, LOCK_FILE)), { timeout: LOCK_WAIT_MS });
    try {
      db.pragma("locking_mode = EXCLUSIVE");
      db.exec("BEGIN EXCLUSIVE; COMMIT");
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
      throw inUse(dataDir, readPid(join(dataDir, PID_FILE)));
    }
    const lock = new DataDirLock(db, join(dataDir, PID_FILE));
    const legacy = readPid(join(dataDir, LEGACY_LOCK_FILE));
    if (legacy !== null && legacy !== process.pid) {
      lock.release();
      throw inUse(dataDir, legacy);
    }
    rmSync(join(dataDir, LEGACY_LOCK_FILE), { force: true });
    const staged = `${lock.pidPath}.${process.pid}`;
    writeFileSync(staged, String(process.pid), { mode: PRIVATE_FILE_MODE });
    renameSync(staged, lock.pidPath); // readers see the old pid or the new one, never half
    return lock;
  }

  release(): void {
    if (!this.db.open) return;
    if (readPid(this.pidPath) === process.pid) rmSync(this.pidPath, { force: true });
    this.db.close(); // releases the OS lock
  }
}

/** The live process named by a pid file, or null (no file, garbage, or a process gone). */
function readPid(path: string): number | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : null;
}

function inUse(dataDir: string, pid: number | null): Error {
  const holder = pid === null ? "another process" : `process ${pid}`;
  return new Error(`data directory ${dataDir} is in use by ${holder} (another prim dev?)`);
}
