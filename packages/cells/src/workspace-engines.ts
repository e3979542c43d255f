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
import { ServiceError } from "@prim/wire";
import { PgSecretExportPolicy } from "./secret-export-policy.js";

/** How long a client should wait before retrying a call for a workspace being moved. */
export const MOVING_RETRY_AFTER_S = 1;

/**
 * A call that found its workspace frozen for longer than it waits (a move between cells):
 * 503 with `Retry-After`, safe to retry (nothing ran). The spec's server-fault code.
 */
export function workspaceMoving(): ServiceError {
  return new ServiceError("internal_error", "the workspace is moving between cells; retry shortly (nothing was done)", {
    status: 503,
    headers: { "Retry-After": String(MOVING_RETRY_AFTER_S) },
  });
}

interface Tenant {
  engine: Engine;
  inflight: number;
  lastUsed: number;
  /** Aborted when the workspace is quiesced: long polls answer at once (nothing) instead of holding it. */
  quiet: AbortController;
}

/**
 * The cell's door to data (CLOUD.md, Tenancy): each call goes to the engine of the principal's
 * workspace — opened on first use over the shared cell (SQL host, audit writer, key ring) with
 * the workspace's Postgres catalog — before anything else happens, so no code path can name
 * another workspace's group or primitive. Engines idle for `idleMs` with nothing in flight close.
 */
export class WorkspaceEngines implements Invoker {
  private readonly tenants = new Map<string, Tenant>();
  /** Workspaces held for a move or a ship (cell-service.ts), until an instant; Infinity: moved away. */
  private readonly frozen = new Map<string, number>();
  private readonly idleWaiters = new Map<string, (() => void)[]>();
  /** When each workspace was last called (kept after its engine closes: what ships look at). */
  private readonly touched = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  /** Whether an export may carry vault values for another key: one rule for every engine. */
  private readonly secretExport: PgSecretExportPolicy;
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
    this.secretExport = new PgSecretExportPolicy(hub.pool);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** The engine of `workspace` if it is open and not held (never opens one). */
  openEngine(workspace: string): Engine | undefined {
    return this.isFrozen(workspace) ? undefined : this.tenants.get(workspace)?.engine;
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
        secretExport: this.secretExport,
      });
      tenant = { engine, inflight: 0, lastUsed: this.now(), quiet: new AbortController() };
      this.tenants.set(workspace, tenant);
    }
    return tenant;
  }

  /**
   * Calls the workspace's engine. A frozen workspace is refused here, in the same tick as the
   * call is counted in flight, so `quiesce` never misses one; callers route around it first
   * (placement-router.ts waits for the freeze to end).
   */
  async invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: string | null,
    input: unknown,
    meta?: InvokeMeta,
  ): Promise<O> {
    if (this.isFrozen(principal.workspace)) throw workspaceMoving();
    const tenant = this.tenant(principal.workspace);
    tenant.inflight++;
    tenant.lastUsed = this.now();
    this.touched.set(principal.workspace, tenant.lastUsed);
    try {
      const quiet = tenant.quiet.signal;
      const signal = meta?.signal === undefined ? quiet : AbortSignal.any([meta.signal, quiet]);
      return await tenant.engine.invoke<O>(principal, opName, target, input, { ...meta, signal });
    } finally {
      tenant.inflight--;
      if (tenant.inflight === 0) this.wakeIdle(principal.workspace);
    }
  }

  /** When `workspace` was last called in this process (undefined: never). */
  lastUsed(workspace: string): number | undefined {
    return this.touched.get(workspace);
  }

  /** Whether calls for `workspace` are held (a move or a ship has it). */
  isFrozen(workspace: string): boolean {
    const until = this.frozen.get(workspace);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.frozen.delete(workspace);
    return false;
  }

  /**
   * Holds new calls for `workspace` until `until` (or `thaw`), waits for those in flight and
   * closes its engine: its files are then at rest (checkpointed, nothing writing) and can be
   * copied as they are.
   */
  async quiesce(workspace: string, until: number): Promise<void> {
    this.frozen.set(workspace, until);
    const tenant = this.tenants.get(workspace);
    if (tenant === undefined) return;
    tenant.quiet.abort();
    if (tenant.inflight > 0) {
      await new Promise<void>((resolve) => {
        const list = this.idleWaiters.get(workspace) ?? [];
        list.push(resolve);
        this.idleWaiters.set(workspace, list);
      });
    }
    if (this.tenants.get(workspace) === tenant) this.tenants.delete(workspace);
    await tenant.engine.close();
  }

  /**
   * Lets calls for `workspace` in again; with `until`, only if the hold is still the one that
   * was set with it (a ship's thaw must not end a move's freeze that began meanwhile).
   */
  thaw(workspace: string, until?: number): void {
    if (until === undefined || this.frozen.get(workspace) === until) this.frozen.delete(workspace);
  }

  private wakeIdle(workspace: string): void {
    const waiters = this.idleWaiters.get(workspace);
    if (waiters === undefined) return;
    this.idleWaiters.delete(workspace);
    for (const wake of waiters) wake();
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
