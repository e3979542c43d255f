import type { Grant, GrantSummary, SecretInfo, SecretListing } from "@prim/wire";
import { ServiceError } from "@prim/wire";
import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import { context, type Sealed, seal, unseal } from "../../keys/cipher.js";
import type { KeyRing } from "../../keys/keyring.js";
import type { ChangeLog } from "../changes/log.js";

export type { Grant, GrantSummary, SecretInfo, SecretListing };

/**
 * A vault's tables. `secrets` keeps only the current version of each value, encrypted; no
 * column ever holds plaintext. `meta` records which primitive id and group the ciphertexts are
 * bound to (`bound_id`, `group_id`), so a copied file (a fork) is re-sealed on first use.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS secrets (
  name TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  iv BLOB NOT NULL,
  tag BLOB NOT NULL,
  ciphertext BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS grants (
  name TEXT PRIMARY KEY REFERENCES secrets (name) ON DELETE CASCADE,
  hosts TEXT NOT NULL,
  methods TEXT,
  expires_at INTEGER,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

interface SecretRow extends SecretInfo {
  key_id: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

interface GrantRow {
  name: string;
  hosts: string;
  methods: string | null;
  expires_at: number | null;
  created_at: number;
}

const toGrant = (row: GrantRow): Grant => ({
  name: row.name,
  hosts: JSON.parse(row.hosts) as string[],
  methods: row.methods === null ? null : (JSON.parse(row.methods) as string[]),
  expires_at: row.expires_at,
  created_at: row.created_at,
});

/**
 * The `key_id` of a secret that has a name, a version and maybe a grant but no value: imported
 * from a group archive made without vault values (ops/archive.ts). Its value columns are empty;
 * using it is 409 until a put stores one.
 */
export const NO_VALUE_KEY_ID = "none";

/** 409 `conflict`: the secret exists but has no value to inject (never a silent empty one). */
export const needsValue = (name: string) =>
  new ServiceError(
    "conflict",
    `secret '${name}' has no value here: it came from a group archive exported without vault values; put a value for it (PUT …/secrets/${name}) to use it`,
  );

/** Binds a ciphertext to its primitive, secret name and version: rows cannot be swapped. */
export const secretContext = (primitiveId: string, name: string, version: number) =>
  context("prim.vault.secret.v1", primitiveId, name, version);

export class VaultStore {
  private readonly stmts;
  /** Primitive id and group the rows are sealed for (null until the first operation). */
  private boundId: string | null;
  private groupId: string | null;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
    private readonly keyRing: KeyRing,
    /** The primitive's change log: `set`, `rotate`, `delete`, `grant`, `revoke` — names and versions, never a value. */
    private readonly changes: ChangeLog,
  ) {
    db.exec(SCHEMA);
    this.stmts = {
      meta: db.prepare("SELECT value FROM meta WHERE key = ?").pluck(),
      setMeta: db.prepare(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ),
      secret: db.prepare("SELECT * FROM secrets WHERE name = ?"),
      allSecrets: db.prepare("SELECT * FROM secrets"),
      foreignKeys: db.prepare("SELECT count(*) FROM secrets WHERE key_id != ?").pluck(),
      upsert: db.prepare(
        `INSERT INTO secrets (name, version, key_id, iv, tag, ciphertext, created_at, updated_at)
         VALUES (@name, @version, @key_id, @iv, @tag, @ciphertext, @created_at, @updated_at)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, key_id = excluded.key_id, iv = excluded.iv,
           tag = excluded.tag, ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`,
      ),
      reseal: db.prepare("UPDATE secrets SET key_id = ?, iv = ?, tag = ?, ciphertext = ? WHERE name = ?"),
      deleteSecret: db.prepare("DELETE FROM secrets WHERE name = ?"),
      count: db.prepare("SELECT count(*) FROM secrets").pluck(),
      list: db.prepare(
        `SELECT s.name, s.version, s.created_at, s.updated_at, s.key_id = '${NO_VALUE_KEY_ID}' AS needs_value,
           g.hosts, g.methods, g.expires_at, g.created_at AS granted_at
         FROM secrets s LEFT JOIN grants g ON g.name = s.name WHERE s.name > ? ORDER BY s.name LIMIT ?`,
      ),
      grant: db.prepare("SELECT * FROM grants WHERE name = ?"),
      listGrants: db.prepare("SELECT * FROM grants WHERE name > ? ORDER BY name LIMIT ?"),
      upsertGrant: db.prepare(
        `INSERT INTO grants (name, hosts, methods, expires_at, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET hosts = excluded.hosts, methods = excluded.methods,
           expires_at = excluded.expires_at, created_at = excluded.created_at`,
      ),
      deleteGrant: db.prepare("DELETE FROM grants WHERE name = ?"),
    };
    this.boundId = (this.stmts.meta.get("bound_id") as string | undefined) ?? null;
    this.groupId = (this.stmts.meta.get("group_id") as string | undefined) ?? null;
  }

  /**
   * Makes sure every value is sealed for primitive `id` in group `groupId` — under that group's
   * key, bound to that id — re-sealing them first if the file was copied (a fork) or a move
   * did not finish. Cheap when nothing changed; every operation calls it first.
   */
  bind(id: string, groupId: string): void {
    if (id === this.boundId && groupId === this.groupId) return;
    this.reseal(id, groupId);
  }

  /** The primitive moved to another group: every value is re-sealed under that group's key. */
  moved(toGroupId: string): void {
    if (this.boundId === null) {
      this.groupId = null; // nothing sealed yet: the next operation binds
      return;
    }
    this.reseal(this.boundId, toGroupId);
  }

  count(): number {
    return this.stmts.count.get() as number;
  }

  put(name: string, value: string): SecretInfo {
    const { id, groupId } = this.bound();
    const now = this.clock.now();
    const existing = this.stmts.secret.get(name) as SecretRow | undefined;
    const version = (existing?.version ?? 0) + 1;
    const key = this.keyRing.groupKey(groupId);
    const sealed = seal(key.key, Buffer.from(value, "utf8"), secretContext(id, name, version));
    const info: SecretInfo = { name, version, created_at: existing?.created_at ?? now, updated_at: now };
    this.db.transaction(() => {
      this.stmts.upsert.run({ ...info, key_id: key.id, ...sealed });
      this.changes.append(existing === undefined ? "set" : "rotate", name, { version });
    })();
    return info;
  }

  /** Deletes the secret and its grant; false when there was none. */
  delete(name: string): boolean {
    return this.db.transaction(() => {
      this.stmts.deleteGrant.run(name);
      if (this.stmts.deleteSecret.run(name).changes === 0) return false;
      this.changes.append("delete", name);
      return true;
    })();
  }

  exists(name: string): boolean {
    return this.stmts.secret.get(name) !== undefined;
  }

  /** Whether the secret exists without a value (imported without values; `NO_VALUE_KEY_ID`). */
  needsValue(name: string): boolean {
    return (this.stmts.secret.get(name) as SecretRow | undefined)?.key_id === NO_VALUE_KEY_ID;
  }

  /** Names after `after`, in order, with versions, grants and whether a value is missing; never values. */
  list(after: string, limit: number): SecretListing[] {
    const rows = this.stmts.list.all(after, limit) as (SecretInfo &
      Omit<GrantRow, "name" | "created_at"> & {
        hosts: string | null;
        granted_at: number | null;
        needs_value: number;
      })[];
    return rows.map((row) => ({
      name: row.name,
      version: row.version,
      created_at: row.created_at,
      updated_at: row.updated_at,
      needs_value: row.needs_value === 1,
      grant:
        row.hosts === null
          ? null
          : {
              hosts: JSON.parse(row.hosts) as string[],
              methods: row.methods === null ? null : (JSON.parse(row.methods) as string[]),
              expires_at: row.expires_at,
            },
    }));
  }

  /**
   * The plaintext of a secret, for injecting into an outbound request — the only reader.
   * Null when there is no such secret.
   */
  reveal(name: string): string | null {
    const { id, groupId } = this.bound();
    const row = this.stmts.secret.get(name) as SecretRow | undefined;
    if (row === undefined) return null;
    if (row.key_id === NO_VALUE_KEY_ID) throw needsValue(name);
    const key = this.keyRing.key(row.key_id);
    const plain = key.groupId === groupId ? unseal(key.key, row, secretContext(id, row.name, row.version)) : null;
    if (plain === null) throw new ServiceError("internal_error", `secret '${name}' could not be decrypted`);
    return plain.toString("utf8");
  }

  /** Replaces the secret's grant; null when the secret does not exist. */
  setGrant(name: string, grant: GrantSummary): Grant | null {
    if (!this.exists(name)) return null;
    const now = this.clock.now();
    const methods = grant.methods === null ? null : JSON.stringify(grant.methods);
    this.db.transaction(() => {
      this.stmts.upsertGrant.run(name, JSON.stringify(grant.hosts), methods, grant.expires_at, now);
      this.changes.append("grant", name);
    })();
    return { name, ...grant, created_at: now };
  }

  grant(name: string): Grant | null {
    const row = this.stmts.grant.get(name) as GrantRow | undefined;
    return row === undefined ? null : toGrant(row);
  }

  listGrants(after: string, limit: number): Grant[] {
    return (this.stmts.listGrants.all(after, limit) as GrantRow[]).map(toGrant);
  }

  deleteGrant(name: string): boolean {
    return this.db.transaction(() => {
      if (this.stmts.deleteGrant.run(name).changes === 0) return false;
      this.changes.append("revoke", name);
      return true;
    })();
  }

  private bound(): { id: string; groupId: string } {
    if (this.boundId === null || this.groupId === null) throw new Error("vault store used before bind()");
    return { id: this.boundId, groupId: this.groupId };
  }

  private tryUnseal(row: SecretRow, boundId: string): Buffer | null {
    try {
      return unseal(this.keyRing.key(row.key_id).key, row, secretContext(boundId, row.name, row.version));
    } catch {
      return null;
    }
  }

  /** Re-seals every value for (`id`, `groupId`) in one transaction, then records the binding. */
  private reseal(id: string, groupId: string): void {
    const target = this.keyRing.groupKey(groupId);
    const from = this.boundId;
    this.db.transaction(() => {
      const current = from === id && (this.stmts.foreignKeys.get(target.id) as number) === 0;
      if (!current && from !== null) {
        for (const row of this.stmts.allSecrets.all() as SecretRow[]) {
          if (row.key_id === NO_VALUE_KEY_ID) continue; // nothing sealed to move
          // A row that does not decrypt (tampered, or its key gone) stays as it is: reading it
          // answers 500, and it can still be deleted or overwritten instead of locking the vault.
          const plain = this.tryUnseal(row, from);
          if (plain === null) continue;
          const sealed: Sealed = seal(target.key, plain, secretContext(id, row.name, row.version));
          plain.fill(0);
          this.stmts.reseal.run(target.id, sealed.iv, sealed.tag, sealed.ciphertext, row.name);
        }
      }
      this.stmts.setMeta.run("bound_id", id);
      this.stmts.setMeta.run("group_id", groupId);
    })();
    this.boundId = id;
    this.groupId = groupId;
  }
}
