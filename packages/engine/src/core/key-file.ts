import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * A 32-byte secret kept in a file (created with mode 0600 on first use): the local engine's
 * signing key and its master key. A new key is written to a temp file, fsynced, linked into
 * place (which fails if another process made one first: its key wins) and its directory
 * fsynced — a power cut right after the first start must not leave an empty key file, which
 * would keep the engine from ever starting on the directory again.
 */
export function readOrCreateKey(path: string): Buffer {
  const existing = readKey(path);
  if (existing !== null) return existing;
  const key = randomBytes(32);
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, key);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return readKey(path) as Buffer;
  } finally {
    rmSync(tmp, { force: true });
  }
  const dir = openSync(dirname(path), "r");
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
  return key;
}

function readKey(path: string): Buffer | null {
  try {
    const key = readFileSync(path);
    if (key.length === 32) return key;
    throw new Error(`${path} is not a 32-byte key file`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return null;
  }
}
