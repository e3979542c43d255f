import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type CatalogHub,
  groupIdsOf,
  leftBehind,
  markReleased,
  placementsOn,
  readPlacement,
  recordShipped,
  registerCell,
} from "@prim/db";
import type { BlobStore, Cell } from "@prim/engine";
import { invalid, ServiceError } from "@prim/wire";
import type { FastifyInstance } from "fastify";
import type { CellEnv } from "./cell-env.js";
import { archiveStore, localBlobDir } from "./cell-storage.js";
import type { PlacementCache } from "./placement-cache.js";
import { copyWorkspace, packWorkspace, unpackWorkspace, type WorkspaceFiles } from "./workspace-archive.js";
import type { WorkspaceEngines } from "./workspace-engines.js";

const WORKSPACE_RE = /^[A-Za-z0-9_-]{1,64}$/;
/** The directories of workspaces in a cell's data directory (ids are `ws_` + a lowercase ULID). */
const WORKSPACE_DIR_RE = /^ws_[0-9a-z]{26}$/;

function workspaceOf(body: unknown): string {
  const workspace = (body as { workspace?: unknown } | undefined)?.workspace;
  if (typeof workspace !== "string" || !WORKSPACE_RE.test(workspace)) throw invalid("workspace: a workspace id");
  return workspace;
}

/**
 * What a cell does for moves, ships and rebuilds (CLOUD.md, "Scale-out"), on its internal
 * listener (the cells' shared secret): quiesce / thaw a workspace, pack its files into the
 * archive store, unpack an archive as a workspace it is about to serve, release a copy it no
 * longer serves, ship archives of what changed.
 */
export class CellService {
  private shipTimer: NodeJS.Timeout | null = null;
  private shipping: Promise<unknown> = Promise.resolve();
  /** When each workspace was last shipped (ms); a workspace untouched since is skipped. */
  private readonly shipped = new Map<string, number>();
  /** What this process has not seen written may have been written before it started. */
  private readonly startedAt = Date.now();

  constructor(
    readonly id: string,
    private readonly env: CellEnv,
    private readonly cell: Cell,
    private readonly tenants: WorkspaceEngines,
    private readonly hub: CatalogHub,
    private readonly placements: PlacementCache,
    private readonly store: BlobStore = archiveStore(env),
  ) {}

  private files(workspace: string): WorkspaceFiles {
    const local = localBlobDir(this.env);
    return { dataDir: join(this.cell.dataDir, workspace), blobDir: local === null ? null : join(local, workspace) };
  }

  /**
   * Says where this cell is; deletes copies of workspaces that moved away while it was down,
   * and those a move left here without finishing (placed elsewhere, no move under way).
   */
  async register(internalUrl: string | null): Promise<void> {
    await this.announce(internalUrl);
    for (const workspace of await leftBehind(this.hub.pool, this.id)) await this.release(workspace);
    const names = await readdir(this.cell.dataDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => WORKSPACE_DIR_RE.test(n))) {
      const placement = await readPlacement(this.hub.pool, name);
      const moving = placement?.frozenUntil !== null && (placement?.frozenUntil ?? 0) > Date.now();
      if (placement !== null && placement.cell !== this.id && !moving) await this.discard(name);
    }
  }

  /** Says where this cell is (`PRIM_CELL_URL`, else `internalUrl`), nothing more. */
  async announce(internalUrl: string | null): Promise<void> {
    await registerCell(this.hub.pool, this.id, this.env.PRIM_CELL_URL ?? internalUrl);
    this.placements.forget(null);
  }

  /**
   * Deletes a copy of a workspace this cell does not serve and never handed over (an unpack
   * whose move did not finish); it stays held here so nothing opens it again.
   */
  async discard(workspace: string): Promise<{ discarded: boolean }> {
    const placement = await readPlacement(this.hub.pool, workspace);
    if (placement === null || placement.cell === this.id) {
      const why = placement === null ? "is placed on no cell" : "is served by this cell";
      throw new ServiceError("conflict", `workspace '${workspace}' ${why}; it cannot discard it`);
    }
    await this.tenants.quiesce(workspace, Number.POSITIVE_INFINITY);
    await rm(this.files(workspace).dataDir, { recursive: true, force: true });
    return { discarded: true };
  }

  private async groupKeys(workspace: string) {
    return this.cell.keyRing.exportWrapped(await groupIdsOf(this.hub.pool, workspace));
  }

  /** Packs a quiesced workspace (a move's source). */
  async pack(workspace: string): Promise<{ key: string; bytes: number; taken_at: number }> {
    if (!this.tenants.isFrozen(workspace)) throw invalid(`workspace '${workspace}' is not quiesced on this cell`);
    const takenAt = Date.now();
    const archive = await packWorkspace(this.store, this.files(workspace), await this.groupKeys(workspace));
    return { ...archive, taken_at: takenAt };
  }

  /** Installs archive `key` as `workspace` (a move's target, or a rebuild); held until it is placed here. */
  async unpack(workspace: string, key: string): Promise<{ bytes: number }> {
    const placement = await readPlacement(this.hub.pool, workspace);
    if (placement?.cell === this.id) {
      throw new ServiceError("conflict", `workspace '${workspace}' is served by this cell already`);
    }
    // Nothing may open a half-installed copy: held until the unpack is done.
    await this.tenants.quiesce(workspace, Number.POSITIVE_INFINITY);
    try {
      const { keys, bytes } = await unpackWorkspace(this.store, key, this.files(workspace));
      this.cell.keyRing.importWrapped(keys);
      return { bytes };
    } finally {
      this.tenants.thaw(workspace, Number.POSITIVE_INFINITY);
    }
  }

  /**
   * Deletes this cell's copy of a workspace another cell serves (a move's last step; a restart
   * after a crash in it). Refused while this cell still serves it.
   */
  async release(workspace: string): Promise<{ released: boolean }> {
    const placement = await readPlacement(this.hub.pool, workspace);
    if (placement !== null && placement.cell === this.id) {
      throw new ServiceError("conflict", `workspace '${workspace}' is served by this cell; it cannot release it`);
    }
    await this.tenants.quiesce(workspace, Number.POSITIVE_INFINITY);
    const files = this.files(workspace);
    await rm(files.dataDir, { recursive: true, force: true });
    await markReleased(this.hub.pool, workspace, this.id);
    this.placements.forget(workspace);
    // Held for good (calls route to the owner before they get here): a placement cached
    // stale, with notices lost, must not open an empty copy here. An unpack here lifts it.
    return { released: true };
  }

  /**
   * Ships an archive of each workspace this cell serves that was used since its last ship:
   * quiesced only while its files are copied aside, packed and stored afterwards.
   */
  shipNow(): Promise<{ shipped: string[] }> {
    const run = this.shipping.then(async () => {
      const shipped: string[] = [];
      for (const placement of await placementsOn(this.hub.pool, this.id)) {
        const used = this.tenants.lastUsed(placement.workspace);
        const last = this.shipped.get(placement.workspace) ?? placement.shippedAt ?? 0;
        // Untouched in this process: shipped once unless an archive was taken since it started.
        const unchanged = used === undefined ? last >= this.startedAt : used <= last;
        if (placement.shippedKey !== null && unchanged) continue;
        if (placement.frozenUntil !== null && placement.frozenUntil > Date.now()) continue; // a move has it
        if (await this.shipOne(placement.workspace)) shipped.push(placement.workspace);
      }
      return { shipped };
    });
    this.shipping = run.catch(() => {});
    return run;
  }

  private async shipOne(workspace: string): Promise<boolean> {
    if (this.tenants.isFrozen(workspace)) return false;
    const takenAt = Date.now();
    const aside = join(this.cell.dataDir, ".ship", workspace);
    let copy: WorkspaceFiles;
    const until = takenAt + 60_000;
    await this.tenants.quiesce(workspace, until);
    try {
      copy = await copyWorkspace(this.files(workspace), aside);
    } finally {
      this.tenants.thaw(workspace, until);
    }
    try {
      const { key } = await packWorkspace(this.store, copy, await this.groupKeys(workspace));
      await recordShipped(this.hub.pool, workspace, this.id, key, takenAt);
      this.shipped.set(workspace, takenAt);
      return true;
    } finally {
      await rm(aside, { recursive: true, force: true });
    }
  }

  /** Ships every `PRIM_SHIP_INTERVAL_S` seconds (0: never). */
  startShipping(): void {
    const seconds = this.env.PRIM_SHIP_INTERVAL_S;
    if (seconds === 0) return;
    this.shipTimer = setInterval(() => void this.shipNow().catch(() => {}), seconds * 1000);
    this.shipTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.shipTimer !== null) clearInterval(this.shipTimer);
    await this.shipping;
  }

  /** The internal routes (the internal app checks the shared secret on every request). */
  mount(app: FastifyInstance): void {
    app.get("/internal/cell", async () => ({ id: this.id, open: this.tenants.openWorkspaces() }));
    app.post("/internal/cell/quiesce", async (req) => {
      const workspace = workspaceOf(req.body);
      const until = Number((req.body as { until?: unknown }).until);
      if (!Number.isFinite(until)) throw invalid("until: an instant (ms)");
      const placement = await readPlacement(this.hub.pool, workspace);
      if (placement?.cell !== this.id)
        throw new ServiceError("conflict", `workspace '${workspace}' is not served here`);
      await this.tenants.quiesce(workspace, until);
      return { quiesced: true };
    });
    app.post("/internal/cell/thaw", async (req) => {
      this.tenants.thaw(workspaceOf(req.body));
      return { thawed: true };
    });
    app.post("/internal/cell/pack", async (req) => this.pack(workspaceOf(req.body)));
    app.post("/internal/cell/unpack", async (req) => {
      const key = (req.body as { key?: unknown }).key;
      if (typeof key !== "string" || !/^[0-9a-f]{64}$/.test(key)) throw invalid("key: an archive's sha256");
      return this.unpack(workspaceOf(req.body), key);
    });
    app.post("/internal/cell/release", async (req) => this.release(workspaceOf(req.body)));
    app.post("/internal/cell/discard", async (req) => this.discard(workspaceOf(req.body)));
    app.post("/internal/cell/ship", async () => this.shipNow());
  }
}
