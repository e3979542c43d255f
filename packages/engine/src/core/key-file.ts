import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

/**
 * A 32-byte secret kept in a file (created with mode 0600 on first use): the local engine's
 * signing key and, later, its master key.
 */
export function readOrCreateKey(path: string): Buffer {
  try {
    const key = readFileSync(path);
    if (key.length === 32) return key;
    throw new Error(`${path} is not a 32-byte key file`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const key = randomBytes(32);
  writeFileSync(path, key, { mode: 0o600, flag: "wx" });
  return key;
}
