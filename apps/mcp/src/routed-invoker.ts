import { PlacementCache } from "@prim/db";
import type { InvokeMeta, Invoker, Principal } from "@prim/wire";
import { RemoteInvokers } from "@prim/wire/invoke";
import type pg from "pg";

/**
 * apps/mcp's door to data with several cells (CLOUD.md, "Scale-out"): each call goes straight
 * to the internal listener of the cell its workspace is placed on (placements cached for 2 s;
 * a stale one costs a hop: that cell forwards). Without a placement or a cell address — one
 * cell, or Postgres unreachable — calls go to `PRIM_INTERNAL_URL`, whose cell routes them.
 */
export class RoutedInvoker implements Invoker {
  private readonly placements: PlacementCache;
  private readonly remotes: RemoteInvokers;

  constructor(
    pool: pg.Pool,
    private readonly fallbackUrl: string,
    secret: string,
  ) {
    this.placements = new PlacementCache(pool);
    this.remotes = new RemoteInvokers(secret);
  }

  private async urlFor(workspace: string): Promise<string> {
    try {
      const placement = await this.placements.placement(workspace);
      if (placement === null) return this.fallbackUrl;
      return (await this.placements.cellUrl(placement.cell)) ?? this.fallbackUrl;
    } catch {
      return this.fallbackUrl;
    }
  }

  async invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: string | null,
    input: unknown,
    meta?: InvokeMeta,
  ): Promise<O> {
    const url = await this.urlFor(principal.workspace);
    return this.remotes.for(url).invoke<O>(principal, opName, target, input, meta);
  }
}
