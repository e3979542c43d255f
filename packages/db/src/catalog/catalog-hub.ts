import pg from "pg";
import { connectionError } from "../connect.js";
import { type CatalogHubPort, PgCatalog } from "./pg-catalog.js";

const CHANNEL = "prim_catalog";
const DAY_MS = 86_400_000;

/**
 * What one process shares for every workspace's Postgres catalog: the pool, one LISTEN
 * connection on `prim_catalog` (a write anywhere drops the written workspace's cached records in
 * every process), and the audit partitions' upkeep.
 */
export class CatalogHub implements CatalogHubPort {
  private readonly catalogs = new Map<string, Set<PgCatalog>>();
  private partitionsDay = -1;

  private constructor(
    readonly pool: pg.Pool,
    private readonly listener: pg.Client,
    private readonly clock: () => number,
  ) {
    listener.on("notification", (message) => {
      if (message.channel !== CHANNEL || message.payload === undefined) return;
      for (const catalog of this.catalogs.get(message.payload) ?? []) catalog.invalidate();
    });
  }

  /** Connects (a clear error if Postgres does not answer) and starts listening. */
  static async open(
    databaseUrl: string,
    options: { poolSize?: number; clock?: () => number } = {},
  ): Promise<CatalogHub> {
    const url = new URL(databaseUrl);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
    // A dropped idle connection must not crash the process; the next query gets a fresh one.
    pool.on("error", () => {});
    const listener = new pg.Client({ connectionString: databaseUrl });
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      await pool.end().catch(() => {});
      throw connectionError(err, url);
    }
    listener.on("error", () => {});
    const hub = new CatalogHub(pool, listener, options.clock ?? Date.now);
    await hub.auditPartitions();
    return hub;
  }

  /** The catalog of one workspace (its rows only). */
  catalog(workspace: string): PgCatalog {
    const catalog = new PgCatalog(this, workspace);
    const set = this.catalogs.get(workspace) ?? new Set();
    set.add(catalog);
    this.catalogs.set(workspace, set);
    const close = catalog.close.bind(catalog);
    catalog.close = async () => {
      set.delete(catalog);
      await close();
    };
    return catalog;
  }

  async changed(workspace: string): Promise<void> {
    await this.pool.query("SELECT pg_notify($1, $2)", [CHANNEL, workspace]);
  }

  async auditPartitions(): Promise<void> {
    const now = this.clock();
    const day = Math.floor(now / DAY_MS);
    if (day === this.partitionsDay) return;
    await this.pool.query("SELECT prim_audit_partitions($1)", [now]);
    this.partitionsDay = day;
  }

  async close(): Promise<void> {
    await this.listener.end().catch(() => {});
    await this.pool.end();
  }
}
