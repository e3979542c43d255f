import { ALL_PLACEMENTS, listPlacements, readPlacement } from "@prim/db";
import { workspaceTag } from "@prim/wire";
import type pg from "pg";
import { backendName } from "./haproxy-config.js";
import type { HaproxyRuntime } from "./haproxy-runtime.js";

export interface EdgeMapWatcherOptions {
  pool: Pick<pg.Pool, "query">;
  /** The placement notices (CatalogHub.watchPlacements), as PlacementCache hears them. */
  hub: { watchPlacements(watch: (workspace: string | null) => void): () => void };
  runtime: HaproxyRuntime;
  /** The map file the config names (`haproxy-config.ts`). */
  mapFile: string;
  /** The cells the config has a backend for; a workspace on any other goes to the fallback. */
  cells: readonly string[];
  /** A change could not be applied (HAProxy or Postgres away): the next notice or resync retries. */
  onError?: (err: unknown) => void;
}

/**
 * Keeps HAProxy's map workspace tag → cell backend equal to the placements (issue 43, "Routing at
 * the edge"): on start, and whenever changes may have been missed (the notice `*` or null: the
 * LISTEN connection was lost), every placement is loaded and the map replaced at once
 * (`prepare`/`commit map`); each `placement:<workspace>` notice on `prim_catalog` — the one
 * PlacementCache follows — reads that placement afresh and sets or drops its entry. Changes are
 * applied one at a time, in order. Between a flip and its entry, HAProxy sends the workspace's
 * requests to the cell it left, which forwards them in Node: late, never wrong.
 */
export class EdgeMapWatcher {
  private readonly cells: Set<string>;
  private chain: Promise<void> = Promise.resolve();
  private unwatch: () => void = () => {};
  /** Entries applied since start (resyncs count each entry): for tests and logs. */
  applied = 0;

  private constructor(private readonly options: EdgeMapWatcherOptions) {
    this.cells = new Set(options.cells);
  }

  static async start(options: EdgeMapWatcherOptions): Promise<EdgeMapWatcher> {
    const watcher = new EdgeMapWatcher(options);
    // Listening first: a change during the load is applied after it, never lost.
    watcher.unwatch = options.hub.watchPlacements((workspace) => watcher.notice(workspace));
    await watcher.enqueue(() => watcher.resync());
    return watcher;
  }

  private backendOf(cell: string): string | null {
    return this.cells.has(cell) ? backendName(cell) : null;
  }

  private notice(workspace: string | null): void {
    const resync = workspace === null || workspace === ALL_PLACEMENTS;
    void this.enqueue(() => (resync ? this.resync() : this.follow(workspace))).catch((err: unknown) =>
      this.options.onError?.(err),
    );
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.chain.then(step);
    this.chain = next.catch(() => {});
    return next;
  }

  /** Resolves once every change heard so far is applied. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Loads every placement and replaces the map with them. */
  async resync(): Promise<void> {
    const entries: [string, string][] = [];
    for (const { workspace, cell } of await listPlacements(this.options.pool)) {
      const tag = workspaceTag(workspace);
      const backend = this.backendOf(cell);
      if (tag !== null && backend !== null) entries.push([tag, backend]);
    }
    await this.options.runtime.replaceMap(this.options.mapFile, entries);
    this.applied += entries.length;
  }

  /** One workspace's placement, read now, into the map. */
  private async follow(workspace: string): Promise<void> {
    const tag = workspaceTag(workspace);
    if (tag === null) return;
    const placement = await readPlacement(this.options.pool, workspace);
    const backend = placement === null ? null : this.backendOf(placement.cell);
    if (backend === null) await this.options.runtime.delMap(this.options.mapFile, tag);
    else await this.options.runtime.setMap(this.options.mapFile, tag, backend);
    this.applied += 1;
  }

  async close(): Promise<void> {
    this.unwatch();
    await this.chain;
  }
}
