import { hash } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { type Principal, ServiceError } from "@prim/engine";
import { type Caveat, parseAttenuated, verifyAttenuated, workspaceTag } from "@prim/wire";
import type pg from "pg";
import { admitKey, invalidToken, type KeyAdmission, keyAdmission } from "./key-limits.js";
import { KEY_ROW_COLUMNS, type KeyRow } from "./key-row.js";
import { auditedTransaction } from "./workspace-audit.js";

/** The root key row an attenuated token names: the key resolver's row, with its start and hash. */
export interface RootKeyRow extends KeyRow {
  start: string;
  hash: string;
}

/** What a verified token leaves to check on every request: its earliest expiry and its address lists. */
interface Verified {
  principal: Principal;
  rootHash: string;
  expiresAt: number | null;
  ipLists: BlockList[];
  /** The root key's own expiry and IP allowlist, which every token made from it keeps. */
  root: KeyAdmission;
  at: number;
}

/**
 * `pa_` tokens (offline attenuation, `@prim/wire` attenuation.ts) to principals: the root key is
 * looked up by the token's id (the first half of its sha256, a range scan of the unique index on
 * `api_keys.hash`), the HMAC chain is recomputed from the stored hash, and every caveat narrows
 * the root key's principal — group and tools and read-only as the principal's own fields, which
 * `engine.invoke` enforces; expiry (401) and client address (403) here, on every request, since
 * the engine never sees the address of an MCP call. A verified token is cached under the token
 * itself, remembered by its root's hash: revoking the root (`forget(hash)`) drops every token
 * made from it at once.
 */
export class AttenuatedTokens {
  private readonly cache = new Map<string, Verified>();
  /** Token hashes this process has recorded (or found recorded) in `attenuations`. */
  private readonly recorded = new Set<string>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly principalOf: (row: RootKeyRow) => Principal,
    private readonly options: { ttlMs?: number; maxEntries?: number; now: () => number },
  ) {}

  async resolve(token: string, clientIp: string | undefined): Promise<{ principal: Principal; rootHash: string }> {
    const now = this.options.now();
    let verified = this.cache.get(token);
    if (verified === undefined || now - verified.at >= (this.options.ttlMs ?? 30_000)) {
      this.cache.delete(token);
      verified = await this.verify(token, now);
      if (this.cache.size >= (this.options.maxEntries ?? 10_000)) this.cache.clear();
      this.cache.set(token, verified);
    }
    // The root key's own limits hold for every token made from it, checked as for the key.
    admitKey(verified.root, now, clientIp);
    if (verified.expiresAt !== null && now >= verified.expiresAt) throw invalidToken();
    if (verified.ipLists.length > 0) {
      const address = clientIp === undefined ? undefined : normalizeAddress(clientIp);
      const family = address === undefined ? 0 : isIP(address);
      if (
        address === undefined ||
        family === 0 ||
        !verified.ipLists.every((list) => list.check(address, family === 4 ? "ipv4" : "ipv6"))
      ) {
        throw new ServiceError("forbidden", "this token is limited to other client addresses");
      }
    }
    return { principal: verified.principal, rootHash: verified.rootHash };
  }

  /** Drops every token made from the key of this hash (revocation). */
  forget(rootHash: string): void {
    for (const [token, entry] of this.cache) if (entry.rootHash === rootHash) this.cache.delete(token);
  }

  private async verify(token: string, now: number): Promise<Verified> {
    const parts = parseAttenuated(token);
    if (parts === null) throw invalidToken();
    // Hex sorts the same in every collation; `g` sorts after every hex digit.
    const { rows } = await this.pool.query<RootKeyRow>(
      `SELECT k.start, k.hash, ${KEY_ROW_COLUMNS}
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
        WHERE k.hash >= $1 AND k.hash < $1 || 'g' AND k.revoked_at IS NULL
        LIMIT 2`,
      [parts.id],
    );
    for (const row of rows) {
      const caveats = await verifyAttenuated(parts, row.hash);
      if (caveats !== null) {
        // The tag is outside the chain: one naming another workspace than the root's is refused.
        if (parts.tag !== null && parts.tag !== workspaceTag(row.workspace_id)) throw invalidToken();
        const narrowed = await this.narrow(this.principalOf(row), caveats);
        await this.recordFirst(token, row, parts.caveats);
        return { ...narrowed, root: keyAdmission(row), rootHash: row.hash, at: now };
      }
    }
    throw invalidToken();
  }

  /**
   * The first verification of a token anywhere: a row in `attenuations` (its sha256, the key,
   * the caveats) and the control-plane audit entry `key.attenuate` in one transaction; the
   * primary key makes it once across processes. Later verifications in this process skip it.
   */
  private async recordFirst(token: string, row: RootKeyRow, caveats: readonly string[]): Promise<void> {
    const tokenHash = hash("sha256", token, "hex");
    if (this.recorded.has(tokenHash)) return;
    await auditedTransaction(this.pool, async (client, record) => {
      const inserted = await client.query(
        `INSERT INTO attenuations (hash, key_id, workspace_id, caveats) VALUES ($1, $2, $3, $4)
           ON CONFLICT (hash) DO NOTHING`,
        [tokenHash, row.id, row.workspace_id, JSON.stringify(caveats)],
      );
      if (inserted.rowCount === 1) {
        await record(row.workspace_id, {
          actor: `key:${row.id}`,
          action: "key.attenuate",
          target: row.id,
          detail: { start: row.start, caveats },
        });
      }
    });
    if (this.recorded.size >= (this.options.maxEntries ?? 10_000)) this.recorded.clear();
    this.recorded.add(tokenHash);
  }

  /** The root's principal with every caveat applied: each one only ever takes away. */
  private async narrow(root: Principal, caveats: readonly Caveat[]) {
    let principal: Principal = { ...root, attenuated: true };
    let expiresAt: number | null = null;
    const ipLists: BlockList[] = [];
    for (const caveat of caveats) {
      switch (caveat.type) {
        case "group": {
          const groupId = await this.groupWithin(principal, caveat.group);
          principal = { ...principal, kind: "scoped", groupId };
          break;
        }
        case "tools":
          principal = { ...principal, kind: "scoped", narrowed: [...(principal.narrowed ?? []), caveat.tools] };
          break;
        case "read_only":
          principal = { ...principal, readOnly: true };
          break;
        case "expires":
          expiresAt = Math.min(expiresAt ?? caveat.at, caveat.at);
          break;
        case "ip":
          ipLists.push(blockList(caveat.cidrs));
          break;
      }
    }
    return { principal, expiresAt, ipLists };
  }

  /** The id of the group a caveat names (by name or id), which must be the principal's own when it has one. */
  private async groupWithin(principal: Principal, group: string): Promise<string> {
    const { rows } = await this.pool.query<{ id: string }>(
      "SELECT id FROM groups WHERE workspace_id = $1 AND (id = $2 OR name = $2) ORDER BY (id = $2) DESC LIMIT 1",
      [principal.workspace, group],
    );
    const id = rows[0]?.id;
    if (id === undefined || (principal.groupId !== null && principal.groupId !== id)) {
      throw new ServiceError("group_mismatch", `this token's group caveat names '${group}', outside its key's scope`);
    }
    return id;
  }
}

/** An IPv4 address the socket reports as IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is checked as IPv4. */
function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = "", prefix] = cidr.split("/");
    const family = isIP(address);
    // A malformed entry matches nothing: the caveat still narrows, it cannot widen.
    if (family === 0) continue;
    const type = family === 4 ? "ipv4" : "ipv6";
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
    if (bits > (family === 4 ? 32 : 128)) continue;
    list.addSubnet(address, bits, type);
  }
  return list;
}
