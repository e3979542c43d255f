import { ServiceError } from "@prim/wire";
import Database from "better-sqlite3";
import { context, seal, unseal } from "../../keys/cipher.js";
import type { KeyRing } from "../../keys/keyring.js";
import { NO_VALUE_KEY_ID, secretContext } from "./store.js";

/**
 * A vault's values in a group archive (archive/group-archive.ts): a copy of the vault's file
 * whose every value is re-sealed under the archive key — bound to the secret's name and version —
 * instead of the group's data key, which never leaves this engine. No value is ever written in
 * the clear, even to a temporary file: each is decrypted in memory, re-sealed and wiped.
 *
 * An archive made without vault values (no archive key: the cloud's secret-export setting is off)
 * keeps each secret's name, version and grant, with `NO_VALUE_KEY_ID` and empty value columns;
 * imported, such a secret needs a value before it can be used (store.ts).
 */

const ARCHIVE_KEY_ID = "archive";
const archiveContext = (name: string, version: number) => context("prim.archive.secret.v1", name, version);
const EMPTY = Buffer.alloc(0);
const noValue = { keyId: NO_VALUE_KEY_ID, iv: EMPTY, tag: EMPTY, ciphertext: EMPTY };

interface Row {
  name: string;
  version: number;
  key_id: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

/**
 * Re-seals every row of the vault file at `path` with `transform` (which learns the primitive
 * id the rows are bound to now) and binds the file to `meta`, in one transaction.
 */
function rewrite(
  path: string,
  transform: (row: Row, boundId: string) => { keyId: string; iv: Buffer; tag: Buffer; ciphertext: Buffer },
  meta: { id: string; groupId: string },
): void {
  const db = new Database(path);
  try {
    const boundId =
      (db.prepare("SELECT value FROM meta WHERE key = 'bound_id'").pluck().get() as string | undefined) ?? "";
    const rows = db.prepare("SELECT name, version, key_id, iv, tag, ciphertext FROM secrets").all() as Row[];
    const update = db.prepare("UPDATE secrets SET key_id = ?, iv = ?, tag = ?, ciphertext = ? WHERE name = ?");
    const setMeta = db.prepare(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    db.transaction(() => {
      for (const row of rows) {
        const next = transform(row, boundId);
        update.run(next.keyId, next.iv, next.tag, next.ciphertext, row.name);
      }
      setMeta.run("bound_id", meta.id);
      setMeta.run("group_id", meta.groupId);
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

/**
 * Export: the copy at `path` (made from the live vault) ends up sealed under `archiveKey`, or,
 * without one, holds no value at all (names, versions and grants only).
 */
export function sealForArchive(path: string, keyRing: KeyRing, archiveKey: Buffer | null): void {
  rewrite(
    path,
    (row, boundId) => {
      if (archiveKey === null || row.key_id === NO_VALUE_KEY_ID) return noValue;
      const plain = unseal(keyRing.key(row.key_id).key, row, secretContext(boundId, row.name, row.version));
      if (plain === null) {
        throw new ServiceError(
          "internal_error",
          `vault secret '${row.name}' could not be decrypted; nothing was exported`,
        );
      }
      const sealed = seal(archiveKey, plain, archiveContext(row.name, row.version));
      plain.fill(0);
      return { keyId: ARCHIVE_KEY_ID, ...sealed };
    },
    { id: ARCHIVE_KEY_ID, groupId: ARCHIVE_KEY_ID },
  );
}

/**
 * Import: the archived copy at `path` ends up sealed under `groupId`'s data key for primitive
 * `id`, as if it had been written there; a secret archived without its value stays without one.
 * A value that does not decrypt (or comes without the archive key) is a corrupt archive.
 */
export function openFromArchive(
  path: string,
  keyRing: KeyRing,
  archiveKey: Buffer | null,
  target: { id: string; groupId: string },
): void {
  const key = keyRing.groupKey(target.groupId);
  rewrite(
    path,
    (row) => {
      if (row.key_id === NO_VALUE_KEY_ID) return noValue;
      const plain =
        row.key_id === ARCHIVE_KEY_ID && archiveKey !== null
          ? unseal(archiveKey, row, archiveContext(row.name, row.version))
          : null;
      if (plain === null) {
        throw new ServiceError(
          "invalid_request",
          `archive: vault secret '${row.name}' does not decrypt (corrupt archive)`,
        );
      }
      const sealed = seal(key.key, plain, secretContext(target.id, row.name, row.version));
      plain.fill(0);
      return { keyId: key.id, ...sealed };
    },
    target,
  );
}
