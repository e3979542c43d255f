import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";

/** chmod, except that a file owned by another user (which we may still write) is left as is. */
function tighten(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") throw err;
  }
}

/**
 * Everything in a data directory is private to the user running the engine: directories
 * 0700, files 0600 (other local users must not read a database, a key or a blob). Modes are
 * set explicitly rather than through the process umask, because the engine also runs inside
 * other programs (tests, an embedding app) whose umask it must not change. SQLite gives a
 * database's -wal, -shm and journal files the main file's mode, so creating the main file
 * 0600 before SQLite opens it covers those too.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) 0700; an existing directory is tightened to 0700. */
export function privateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, PRIVATE_DIR_MODE);
  return dir;
}

/**
 * Makes sure `path` exists as a file with mode 0600 before SQLite (or a copy) writes it: a
 * missing file is created empty (SQLite takes an empty file as an empty database), an existing
 * one from an older version is tightened.
 */
export function privateFile(path: string): string {
  closeSync(openSync(path, "a", PRIVATE_FILE_MODE));
  tighten(path, PRIVATE_FILE_MODE);
  return path;
}
