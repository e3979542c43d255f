import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../core/clock.js";
import { ulid } from "../core/ids.js";
import { readOrCreateKey } from "../core/key-file.js";
import { openSqlite } from "../sqlite/sqlite.js";
import { context, seal, unseal } from "./cipher.js";
import { type TransferKey, transferKeyFor } from "./transfer.js";

/** A group's data key: vault values of the group's primitives are sealed with it. */
export interface GroupKey {
  id: string;
  groupId: string;
  key: Buffer;
}

/**
 * Per-group data keys, each wrapped by a master key that never leaves the key ring. The local
 * engine keeps the master key in a file; a cloud implementation would wrap with a KMS key.
 */
export interface KeyRing {
  /** The key that new values of `groupId` are sealed with (made on first use). */
  groupKey(groupId: string): GroupKey;
  /** A key by id: every ciphertext names the key it was sealed with. */
  key(keyId: string): GroupKey;
  close(): void;
}

/** What the vault needs from the engine, handed to its stores through `PrimitiveEnv`. */
export interface VaultEnv {
  keyRing: KeyRing;
  /** Test-only: lets fetch reach loopback addresses (127.0.0.0/8, ::1); nothing else private. */
  allowLoopbackFetch: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS group_keys (
  id TEXT PRIMARY KEY,
  group_id TEXT NOT NULL,
  iv BLOB NOT NULL,
  tag BLOB NOT NULL,
  wrapped BLOB NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS group_keys_by_group ON group_keys (group_id, created_at);
`;

/** A group key as another cell stored it: wrapped by the master key, base64 fields. */
export interface WrappedGroupKey {
  id: string;
  groupId: string;
  iv: string;
  tag: string;
  wrapped: string;
  createdAt: number;
}

interface KeyRow {
  id: string;
  group_id: string;
  iv: Buffer;
  tag: Buffer;
  wrapped: Buffer;
}

/**
 * The local key ring: a master key — given (the cloud's `PRIM_MASTER_KEY`), else
 * `<dataDir>/master.key` (32 random bytes, mode 0600, made on first start) — wraps each group's
 * data key with AES-256-GCM; the wrapped keys live in `<dataDir>/keys.sqlite`. A master key that
 * does not unwrap the keys already there refuses to open (a wrong or rotated key must not
 * start a cell whose every vault call would then fail).
 * The wrapping is bound to the key id and group id, so a wrapped key cannot be relabelled as
 * another group's. Unwrapped keys are cached in memory for the life of the process.
 */
export class LocalKeyRing implements KeyRing {
  private readonly master: Buffer;
  private readonly db: Database.Database;
  private readonly byId = new Map<string, GroupKey>();
  private readonly byGroup = new Map<string, GroupKey>();

  constructor(
    dataDir: string,
    private readonly clock: Clock,
    master?: Buffer,
  ) {
    if (master !== undefined && master.length !== 32) throw new Error("the master key must be 32 bytes");
    this.master = master ?? readOrCreateKey(join(dataDir, "master.key"));
    this.db = openSqlite(join(dataDir, "keys.sqlite"));
    try {
      // Every commit fsynced, whatever the engine's durability: a group key lost to a power cut
      // while a secret sealed with it survived would leave that secret unreadable for good.
      // Keys are made once per group, so this costs nothing that matters.
      this.db.pragma("synchronous = FULL");
      this.db.exec(SCHEMA);
      const first = this.db.prepare("SELECT * FROM group_keys ORDER BY id LIMIT 1").get() as KeyRow | undefined;
      if (first !== undefined && this.tryUnwrap(first) === null) {
        throw new Error(
          `the master key does not unwrap the vault keys in ${join(dataDir, "keys.sqlite")} (a different master key made them)`,
        );
      }
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  groupKey(groupId: string): GroupKey {
    const cached = this.byGroup.get(groupId);
    if (cached !== undefined) return cached;
    const row = this.db
      .prepare("SELECT * FROM group_keys WHERE group_id = ? ORDER BY created_at DESC, id DESC LIMIT 1")
      .get(groupId) as KeyRow | undefined;
    const key = row === undefined ? this.create(groupId) : this.unwrap(row);
    this.byGroup.set(groupId, key);
    return key;
  }

  key(keyId: string): GroupKey {
    const cached = this.byId.get(keyId);
    if (cached !== undefined) return cached;
    const row = this.db.prepare("SELECT * FROM group_keys WHERE id = ?").get(keyId) as KeyRow | undefined;
    if (row === undefined) throw new ServiceError("internal_error", "a vault data key is missing from the key ring");
    return this.unwrap(row);
  }

  /** Workspace `workspaceId`'s transfer key (group archives: keys/transfer.ts), its own on every cell. */
  transferKey(workspaceId: string): TransferKey {
    return transferKeyFor(this.master, workspaceId);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * The wrapped keys of `groupIds`, as stored (useless without the master key): what a
   * workspace moving to another cell takes along (@prim/cells workspace-archive.ts).
   */
  exportWrapped(groupIds: readonly string[]): WrappedGroupKey[] {
    const select = this.db.prepare("SELECT * FROM group_keys WHERE group_id = ?");
    return groupIds.flatMap((groupId) =>
      (select.all(groupId) as (KeyRow & { created_at: number })[]).map((row) => ({
        id: row.id,
        groupId: row.group_id,
        iv: row.iv.toString("base64"),
        tag: row.tag.toString("base64"),
        wrapped: row.wrapped.toString("base64"),
        createdAt: row.created_at,
      })),
    );
  }

  /**
   * Adds keys another cell wrapped (present ones are kept). Each must unwrap with this ring's
   * master key — cells share `PRIM_MASTER_KEY` — or nothing is added.
   */
  importWrapped(keys: readonly WrappedGroupKey[]): void {
    const rows = keys.map((k) => ({
      id: k.id,
      group_id: k.groupId,
      iv: Buffer.from(k.iv, "base64"),
      tag: Buffer.from(k.tag, "base64"),
      wrapped: Buffer.from(k.wrapped, "base64"),
      created_at: k.createdAt,
    }));
    for (const row of rows) {
      if (this.tryUnwrap(row) === null) {
        throw new Error(
          `vault key ${row.id} does not unwrap with this cell's master key (cells must share PRIM_MASTER_KEY)`,
        );
      }
    }
    const insert = this.db.prepare(
      "INSERT OR IGNORE INTO group_keys (id, group_id, iv, tag, wrapped, created_at) VALUES (@id, @group_id, @iv, @tag, @wrapped, @created_at)",
    );
    this.db.transaction(() => {
      for (const row of rows) insert.run(row);
    })();
    this.byGroup.clear(); // a group's newest key may be one of these
  }

  private create(groupId: string): GroupKey {
    const now = this.clock.now();
    const key: GroupKey = { id: `dk_${ulid(now)}`, groupId, key: randomBytes(32) };
    const wrapped = seal(this.master, key.key, context("prim.group-key.v1", key.id, groupId));
    this.db
      .prepare("INSERT INTO group_keys (id, group_id, iv, tag, wrapped, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(key.id, groupId, wrapped.iv, wrapped.tag, wrapped.ciphertext, now);
    this.byId.set(key.id, key);
    return key;
  }

  private tryUnwrap(row: KeyRow): Buffer | null {
    return unseal(
      this.master,
      { iv: row.iv, tag: row.tag, ciphertext: row.wrapped },
      context("prim.group-key.v1", row.id, row.group_id),
    );
  }

  private unwrap(row: KeyRow): GroupKey {
    const plain = this.tryUnwrap(row);
    // A wrong master.key or a tampered row: refuse rather than guess.
    if (plain === null) throw new ServiceError("internal_error", "a vault data key could not be unwrapped");
    const key: GroupKey = { id: row.id, groupId: row.group_id, key: plain };
    this.byId.set(key.id, key);
    return key;
  }
}
