import type { CatalogHub } from "@prim/db";
import {
  type BlobStore,
  type Cell,
  Engine,
  type InvokeMeta,
  type Invoker,
  type Limiter,
  type Principal,
} from "@prim/engine";

interface Tenant {
  engine: Engine;
  inflight: number;
  lastUsed: number;
}

/**
 * The cell's door to data (CLOUD.md, Tenancy): each call goes to the engine of the principal's
 * workspace — opened on first use over the shared cell (SQL host, audit writer, key ring) with
 * the workspace's Postgres catalog — before anything else happens, so no code path can name
 * another workspace's group or primitive. Engines idle for `idleMs` with nothing in flight close.
 */
export class WorkspaceEngines implements Invoker {
  private readonly tenants = new Map<string, Tenant>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly cell: Cell,
    private readonly hub: CatalogHub,
    private readonly options: {
      idleMs?: number;
      now?: () => number;
      /** Each workspace's blob store (default: a directory in its data directory). */
      blobsFor?: (workspace: string) => BlobStore;
      /** Limits and metering for every engine (none: unlimited). */
      limiter?: Limiter;
    } = {},
  ) {
    const idleMs = options.idleMs ?? 10 * 60_000;
    this.sweeper = setInterval(() => void this.closeIdle(idleMs), Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** The engine of `workspace` (opened now if it is not open). */
  engine(workspace: string): Engine {
    return this.tenant(workspace).engine;
  }

  private tenant(workspace: string): Tenant {
    let tenant = this.tenants.get(workspace);
    if (tenant === undefined) {
      if (this.closed) throw new Error("the cell is closing");
      const engine = Engine.forWorkspace(this.cell, workspace, {
        catalog: this.hub.catalog(workspace),
        blobs: this.options.blobsFor?.(workspace),
        limiter: this.options.limiter,
      });
      tenant = { engine, inflight: 0, lastUsed: this.now() };
      this.tenants.set(workspace, tenant);
    }
    return tenant;
  }

  async invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: string | null,
    input: unknown,
    meta?: InvokeMeta,
  ): Promise<O> {
    const tenant = this.tenant(principal.workspace);
    tenant.inflight++;
    tenant.lastUsed = this.now();
    try {
      return await tenant.engine.invoke<O>(principal, opName, target, input, meta);
    } finally {
      tenant.inflight--;
    }
  }

  /** Closes engines idle for at least `idleMs` with no call in flight; returns how many. */
  async closeIdle(idleMs: number): Promise<number> {
    const now = this.now();
    const idle = [...this.tenants].filter(([, t]) => t.inflight === 0 && now - t.lastUsed >= idleMs);
    for (const [workspace] of idle) this.tenants.delete(workspace);
    await Promise.all(idle.map(([, t]) => t.engine.close()));
    return idle.length;
  }

  /** The workspaces with an open engine. */
  openWorkspaces(): string[] {
    return [...this.tenants.keys()];
  }

  /** How many workspaces have an open engine. */
  get openCount(): number {
    return this.tenants.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.tenants.values()];
    this.tenants.clear();
    await Promise.all(all.map((t) => t.engine.close()));
  }
}
