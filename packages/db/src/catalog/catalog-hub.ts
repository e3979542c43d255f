import pg from "pg";
import { PLACEMENT_NOTICE } from "../cells/placements.js";
import { connectionError } from "../connect.js";
import { ensureAuditDay, partitionUpkeep } from "./audit-partitions.js";
import { type CatalogHubPort, PgCatalog } from "./pg-catalog.js";

const CHANNEL = "prim_catalog";
const DAY_MS = 86_400_000;

const CONNECT_TIMEOUT_MS = 5_000;
const RELISTEN_FIRST_MS = 250;
const RELISTEN_MAX_MS = 5_000;
/** How long cached records keep serving after the LISTEN connection is lost. */
const STALE_GRACE_MS = 5_000;

/**
 * What one process shares for every workspace's Postgres catalog: the pool, one LISTEN
 * connection on `prim_catalog` (a write anywhere drops the written workspace's cached records in
 * every process), and the audit partitions' upkeep.
 *
 * Postgres going away: the pool hands out fresh connections once it is back (each attempt
 * gives up after 5 s, so requests fail with 500 instead of hanging). A lost LISTEN connection
 * is reopened with a backoff (250 ms doubling to 5 s); once it listens again every cache starts
 * empty. Meanwhile cached records keep serving for 5 s (Postgres down means nobody changes the
 * catalog; in a partition another process might, and is then seen at most 5 s late, the order
 * of the key cache's TTL), then the caches stop (`caching` false: every lookup reads Postgres).
 */
export class CatalogHub implements CatalogHubPort {
  private readonly catalogs = new Map<string, Set<PgCatalog>>();
  private readonly placementWatchers = new Set<(workspace: string | null) => void>();
  private partitionsDay = -1;
  private listening = true;
  private closed = false;
  private relisten: NodeJS.Timeout | null = null;
  private grace: NodeJS.Timeout | null = null;

  private constructor(
    readonly pool: pg.Pool,
    private listener: pg.Client,
    private readonly databaseUrl: string,
    private readonly clock: () => number,
    readonly planCaps: boolean,
  ) {
    this.watch(listener);
  }

  get caching(): boolean {
    return this.listening;
  }

  private watch(listener: pg.Client): void {
    listener.on("notification", (message) => {
      if (message.channel !== CHANNEL || message.payload === undefined) return;
      if (message.payload.startsWith(PLACEMENT_NOTICE)) {
        const workspace = message.payload.slice(PLACEMENT_NOTICE.length);
        for (const watch of this.placementWatchers) watch(workspace);
        return;
      }
      for (const catalog of this.catalogs.get(message.payload) ?? []) catalog.invalidate();
    });
    const lost = () => {
      if (listener !== this.listener || this.closed || !this.listening || this.grace !== null) return;
      this.grace = setTimeout(() => {
        this.grace = null;
        this.listening = false;
        this.invalidateAll();
      }, STALE_GRACE_MS);
      this.grace.unref();
      this.scheduleRelisten(RELISTEN_FIRST_MS);
    };
    listener.on("error", lost);
    listener.on("end", lost);
  }

  private invalidateAll(): void {
    for (const set of this.catalogs.values()) for (const catalog of set) catalog.invalidate();
    for (const watch of this.placementWatchers) watch(null);
  }

  /**
   * Calls `watch` with a workspace whose placement changed anywhere (cells/placements.ts), or
   * null when changes may have been missed (the LISTEN connection was lost): drop everything.
   */
  watchPlacements(watch: (workspace: string | null) => void): () => void {
    this.placementWatchers.add(watch);
    return () => this.placementWatchers.delete(watch);
  }

  private scheduleRelisten(delayMs: number): void {
    this.relisten = setTimeout(() => void this.reopenListener(delayMs), delayMs);
    this.relisten.unref();
  }

  private async reopenListener(delayMs: number): Promise<void> {
    const listener = listenerClient(this.databaseUrl);
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
    } catch {
      await listener.end().catch(() => {});
      if (!this.closed) this.scheduleRelisten(Math.min(RELISTEN_MAX_MS, delayMs * 2));
      return;
    }
    if (this.closed) {
      await listener.end().catch(() => {});
      return;
    }
    this.listener = listener;
    this.watch(listener);
    if (this.grace !== null) clearTimeout(this.grace);
    this.grace = null;
    // Whatever changed while nobody listened: start every cache empty.
    this.invalidateAll();
    this.listening = true;
  }

  /** Connects (a clear error if Postgres does not answer) and starts listening. */
  static async open(
    databaseUrl: string,
    options: {
      poolSize?: number;
      clock?: () => number;
      /** Creates hold to Starter's primitive and group caps, atomically (plan-caps.ts). */
      planCaps?: boolean;
    } = {},
  ): Promise<CatalogHub> {
    const url = new URL(databaseUrl);
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    // A dropped idle connection must not crash the process; the next query gets a fresh one.
    pool.on("error", () => {});
    const listener = listenerClient(databaseUrl);
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      await pool.end().catch(() => {});
      throw connectionError(err, url);
    }
    const hub = new CatalogHub(pool, listener, databaseUrl, options.clock ?? Date.now, options.planCaps ?? false);
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

  /**
   * Makes sure today's audit partitions (and those ahead) exist, and drops days past retention;
   * with `times`, also the partitions of those instants (entries stamped by a clock of their own,
   * ahead of or behind this process's day), without dropping anything.
   */
  async auditPartitions(times: readonly number[] = []): Promise<void> {
    const days = [...new Set(times.map((t) => Math.floor(t / DAY_MS)))];
    for (const day of days) await ensureAuditDay(this.pool, day * DAY_MS);
    const now = this.clock();
    const day = Math.floor(now / DAY_MS);
    if (day === this.partitionsDay) return;
    await partitionUpkeep(this.pool, "SELECT prim_audit_partitions($1)", now);
    this.partitionsDay = day;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.relisten !== null) clearTimeout(this.relisten);
    if (this.grace !== null) clearTimeout(this.grace);
    await this.listener.end().catch(() => {});
    await this.pool.end();
  }
}

function listenerClient(databaseUrl: string): pg.Client {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // Errors of a connection in use surface as "error" events; `watch` handles those that matter.
  client.on("error", () => {});
  return client;
}
