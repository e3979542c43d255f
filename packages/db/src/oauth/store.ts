import { createHash } from "node:crypto";
import type pg from "pg";
import { revokeGrant, tokenRevocation } from "./connections.js";

/** The stored form of every OAuth id (token values, uids, client and grant ids): its sha256. */
export const hashId = (id: string) => createHash("sha256").update(id).digest("hex");

type Payload = Record<string, unknown> & { jti?: string | boolean; grantId?: string; uid?: string };

interface Row {
  payload: Payload;
  consumed_at: Date | null;
}

async function findRow(pool: pg.Pool, model: string, idHash: string): Promise<Row | undefined> {
  const { rows } = await pool.query<Row>(
    `SELECT payload, consumed_at FROM oauth_store
      WHERE model = $1 AND id_hash = $2 AND (expires_at IS NULL OR expires_at > now())`,
    [model, idHash],
  );
  return rows[0];
}

/** The payload as the library wants it back: its id as `jti`, `consumed` when it was. */
function shape(row: Row | undefined, id: string): Payload | undefined {
  if (row === undefined) return undefined;
  const payload: Payload = { ...row.payload };
  // Stored as `true` in place of the raw id (models whose payload names their id).
  if (payload.jti === true) payload.jti = id;
  if (row.consumed_at !== null) payload.consumed = Math.floor(row.consumed_at.getTime() / 1000);
  return payload;
}

/**
 * oidc-provider's storage adapter over Postgres (`oauth_store`), keeping only hashes of ids
 * (CLOUD.md, "OAuth for MCP"): `upsert`, `find`, `consume` and `destroy` are given the raw id,
 * which is hashed before it reaches SQL, and the payload is stored without it (its `jti`, the raw
 * id, is stored as `true`; `find` puts back the id it was asked for). `revokeByGrantId` ends every token of a grant.
 * Written against the library's adapter interface; this package does not depend on the library.
 */
export function postgresOidcAdapter(
  pool: pg.Pool,
  /** Tells every process a grant ended (the revocation fan-out), so cached tokens go at once. */
  publish: (message: string) => Promise<void>,
) {
  return class PostgresOidcAdapter {
    constructor(readonly model: string) {}

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      const stored = payload.jti === undefined ? payload : { ...payload, jti: true };
      const expires = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
      await pool.query(
        `INSERT INTO oauth_store (model, id_hash, payload, grant_id, uid_hash, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (model, id_hash) DO UPDATE
           SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid_hash = EXCLUDED.uid_hash,
               expires_at = EXCLUDED.expires_at`,
        [
          this.model,
          hashId(id),
          JSON.stringify(stored),
          typeof payload.grantId === "string" ? payload.grantId : null,
          typeof payload.uid === "string" ? hashId(payload.uid) : null,
          expires,
        ],
      );
    }

    async find(id: string): Promise<Payload | undefined> {
      return shape(await findRow(pool, this.model, hashId(id)), id);
    }

    /**
     * A session by its uid, for the checks that read it (the interaction's account); its id, a
     * cookie value, is not stored, so the payload comes back without one.
     */
    async findByUid(uid: string): Promise<Payload | undefined> {
      const { rows } = await pool.query<Row>(
        `SELECT payload, consumed_at FROM oauth_store
          WHERE model = $1 AND uid_hash = $2 AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, hashId(uid)],
      );
      if (rows[0] === undefined) return undefined;
      const { jti: _unknown, ...payload } = rows[0].payload;
      return payload;
    }

    async findByUserCode(_userCode: string): Promise<Payload | undefined> {
      return undefined; // the device flow is not enabled
    }

    async consume(id: string): Promise<void> {
      await pool.query("UPDATE oauth_store SET consumed_at = now() WHERE model = $1 AND id_hash = $2", [
        this.model,
        hashId(id),
      ]);
    }

    /** A token revoked by its client (RFC 7009): resource servers drop a cached access token at once. */
    async destroy(id: string): Promise<void> {
      const idHash = hashId(id);
      await pool.query("DELETE FROM oauth_store WHERE model = $1 AND id_hash = $2", [this.model, idHash]);
      if (this.model === "AccessToken") await publish(tokenRevocation(idHash));
    }

    /** Reuse of a code or refresh token: the grant, its tokens and its connection end. */
    async revokeByGrantId(grantId: string): Promise<void> {
      await revokeGrant(pool, grantId, publish);
    }
  };
}

/** Drops rows past their expiry (the server calls it now and then). */
export async function purgeExpiredOAuth(pool: pg.Pool): Promise<number> {
  const { rowCount } = await pool.query("DELETE FROM oauth_store WHERE expires_at < now() - interval '1 minute'");
  return rowCount ?? 0;
}
