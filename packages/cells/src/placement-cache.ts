import { ALL_PLACEMENTS, claimPlacement, listCells, type PlacementRow, placeWorkspace, readPlacement } from "@prim/db";
import type pg from "pg";

export interface PlacementCacheOptions {
  /**
   * How long a placement is trusted without a notice (default 60 s with a hub that hears the
   * notices, else 2 s). A stale one costs a hop, never a wrong answer: a cell that does not own
   * a workspace forwards or refuses (`PlacementRouter`).
   */
  ttlMs?: number;
  /** The notices of placement changes (CatalogHub.watchPlacements). */
  hub?: { watchPlacements(watch: (workspace: string | null) => void): () => void };
  now?: () => number;
}

interface Cached<T> {
  value: T;
  at: number;
}

/**
 * Placements and cells' internal URLs as one process sees them: read from Postgres, cached,
 * dropped on the notice of a change. A workspace without a placement (made before any cell was
 * open) is placed on first use: on the least-loaded open cell, else on `claimer`.
 */
export class PlacementCache {
  private readonly placements = new Map<string, Cached<PlacementRow | null>>();
  private cells: Cached<Map<string, string | null>> | null = null;
  private readonly ttlMs: number;
  private readonly unwatch: () => void;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PlacementCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? (options.hub === undefined ? 2_000 : 60_000);
    this.unwatch = options.hub?.watchPlacements((workspace) => this.forget(workspace)) ?? (() => {});
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Drops one workspace's placement (null or `*`: all, and the cells' addresses). */
  forget(workspace: string | null): void {
    if (workspace === null || workspace === ALL_PLACEMENTS) {
      this.placements.clear();
      this.cells = null;
    } else {
      this.placements.delete(workspace);
    }
  }

  /** The placement of `workspace` (`fresh`: read now), placing it if it has none. */
  async placement(
    workspace: string,
    options: { fresh?: boolean; claimer?: string } = {},
  ): Promise<PlacementRow | null> {
    const cached = this.placements.get(workspace);
    if (!options.fresh && cached !== undefined && this.now() - cached.at < this.ttlMs) return cached.value;
    let row = await readPlacement(this.pool, workspace);
    if (row === null) row = await placeWorkspace(this.pool, workspace);
    if (row === null && options.claimer !== undefined)
      row = await claimPlacement(this.pool, workspace, options.claimer);
    this.placements.set(workspace, { value: row, at: this.now() });
    return row;
  }

  /** The internal URL of `cell` (null: unknown or not reachable). */
  async cellUrl(cell: string, options: { fresh?: boolean } = {}): Promise<string | null> {
    if (options.fresh || this.cells === null || this.now() - this.cells.at >= this.ttlMs) {
      const rows = await listCells(this.pool);
      this.cells = { value: new Map(rows.map((c) => [c.id, c.internalUrl])), at: this.now() };
    }
    return this.cells.value.get(cell) ?? null;
  }

  close(): void {
    this.unwatch();
  }
}
