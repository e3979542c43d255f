import {
  type CellRow,
  flipPlacement,
  freezePlacement,
  inTransaction,
  listCells,
  openPool,
  placementsOn,
  placeWorkspace,
  readCell,
  recordWorkspaceMove,
  replacePlacement,
  setCellState,
  thawPlacement,
} from "@prim/db";
import type { Principal } from "@prim/wire";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";

/*
 * The operator's side of scale-out (`prim admin workspace move`, `prim admin cell rebuild`):
 * runs anywhere that reaches Postgres and the cells' internal listeners. Postgres's placement
 * is the one truth about who serves; every step is ordered so that a crash anywhere leaves
 * exactly one cell serving (CLOUD.md, "Scale-out"; apps/api README, "Several cells").
 */

export interface OperatorEnv {
  DATABASE_URL: string;
  PRIM_INTERNAL_SECRET?: string;
}

/** The steps of a move, in order (`--crash-after` names one: a test kills the mover there). */
export const MOVE_STEPS = ["freeze", "quiesce", "pack", "unpack", "flip", "verify", "release"] as const;
export type MoveStep = (typeof MOVE_STEPS)[number];

export interface MoveOptions {
  /** How long the freeze holds without the mover (default 60 s): a dead mover's freeze ends by itself. */
  leaseMs?: number;
  /** Test-only fault injection: SIGKILL this process right after the step. */
  crashAfter?: MoveStep;
  /** Progress, one line per step done. */
  log?: (line: string) => void;
}

export interface MoveReport {
  workspace: string;
  from: string;
  to: string;
  moved: boolean;
  epoch: number;
  archive: { key: string; bytes: number } | null;
  /** How long writes were held (freeze to flip), ms. */
  frozen_ms: number;
  /** The source deleted its copy (false: it will when it next starts). */
  released: boolean;
}

class CellClient {
  constructor(
    readonly cell: CellRow,
    private readonly secret: string,
  ) {}

  async post<T>(path: string, body: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.cell.internalUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.secret}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new Error(`cell '${this.cell.id}' does not answer at ${this.cell.internalUrl} (${path}: ${cause})`);
    }
    const answer = (await res.json().catch(() => ({}))) as T & { error?: { message?: string } };
    if (!res.ok) throw new Error(`cell '${this.cell.id}' ${path}: ${answer.error?.message ?? res.status}`);
    return answer;
  }

  /** Whether the cell serves `workspace`: a read through its engine answers. */
  async serves(workspace: string): Promise<boolean> {
    const principal: Principal = { kind: "account", workspace, actor: "operator", groupId: null, tools: null };
    const invoker = new RemoteInvoker({ url: this.cell.internalUrl as string, secret: this.secret });
    await invoker.invoke(principal, "group.list", null, {}, { hops: 1 });
    return true;
  }
}

async function cellClient(pool: pg.Pool, id: string, secret: string): Promise<CellClient> {
  const cell = await readCell(pool, id);
  if (cell === null) throw new Error(`no cell '${id}'`);
  if (cell.internalUrl === null) throw new Error(`cell '${id}' has no internal address (it has not started)`);
  return new CellClient(cell, secret);
}

function secretOf(env: OperatorEnv): string {
  if (env.PRIM_INTERNAL_SECRET === undefined) throw new Error("PRIM_INTERNAL_SECRET is required to talk to cells");
  return env.PRIM_INTERNAL_SECRET;
}

/**
 * Moves `workspace` to cell `to`: freeze in Postgres (a lease) → the source quiesces (holds
 * new calls, lets those in flight finish, closes the engine) → packs its files to the archive
 * store → the target unpacks them → the placement flips (only the frozen epoch, only within the
 * lease) → the target answers for it → the source deletes its copy. Before the flip a failure
 * thaws and the source serves on; a dead mover's freeze ends with its lease.
 */
export async function moveWorkspace(
  env: OperatorEnv,
  workspace: string,
  to: string,
  options: MoveOptions = {},
): Promise<MoveReport> {
  const secret = secretOf(env);
  const log = options.log ?? (() => {});
  const done = (step: MoveStep) => {
    log(`move ${workspace}: ${step} done`);
    if (options.crashAfter === step) process.kill(process.pid, "SIGKILL");
  };
  const pool = await openPool(env.DATABASE_URL);
  try {
    const placement = await placeWorkspace(pool, workspace);
    if (placement === null) throw new Error(`no workspace '${workspace}' (or no open cell to place it on)`);
    const target = await cellClient(pool, to, secret);
    if (target.cell.state === "down") throw new Error(`cell '${to}' is down`);
    const report: MoveReport = {
      workspace,
      from: placement.cell,
      to,
      moved: false,
      epoch: placement.epoch,
      archive: null,
      frozen_ms: 0,
      released: false,
    };
    if (placement.cell === to) return report;
    const source = await cellClient(pool, placement.cell, secret);
    const frozen = await freezePlacement(pool, workspace, placement.cell, options.leaseMs ?? 60_000);
    if (frozen === null) throw new Error(`workspace '${workspace}' is being moved already (or moved meanwhile)`);
    const frozenAt = Date.now();
    done("freeze");
    let archive: { key: string; bytes: number; taken_at: number };
    let unpacking = false;
    try {
      await source.post("/internal/cell/quiesce", { workspace, until: frozen.frozenUntil });
      done("quiesce");
      archive = await source.post("/internal/cell/pack", { workspace });
      done("pack");
      unpacking = true;
      await target.post("/internal/cell/unpack", { workspace, key: archive.key });
      done("unpack");
      const archived = { key: archive.key, takenAt: archive.taken_at };
      // The flip and its entry in the workspace's audit trail (`workspace.move`) commit together.
      const flipped = await inTransaction(pool, async (client) => {
        const ok = await flipPlacement(client, workspace, frozen.epoch, to, archived);
        if (ok) await recordWorkspaceMove(pool, { workspace, from: placement.cell, to }, client);
        return ok;
      });
      if (!flipped)
        throw new Error("the freeze's lease ran out before the flip; nothing moved (try a longer --lease-ms)");
    } catch (err) {
      await thawPlacement(pool, workspace, frozen.epoch);
      await source.post("/internal/cell/thaw", { workspace }).catch(() => {});
      // The target's copy was never served: gone now (or when the target next starts).
      if (unpacking) await target.post("/internal/cell/discard", { workspace }).catch(() => {});
      throw err;
    }
    report.frozen_ms = Date.now() - frozenAt;
    report.moved = true;
    report.epoch = frozen.epoch + 1;
    report.archive = { key: archive.key, bytes: archive.bytes };
    done("flip");
    await target.serves(workspace);
    done("verify");
    report.released = await source
      .post<{ released: boolean }>("/internal/cell/release", { workspace })
      .then((r) => r.released)
      .catch(() => false);
    done("release");
    return report;
  } finally {
    await pool.end();
  }
}

export interface RebuildReport {
  cell: string;
  restored: { workspace: string; to: string; snapshot_at: string; archive: string }[];
  /** Never shipped: they start empty on their new cell. */
  empty: { workspace: string; to: string }[];
}

/**
 * A cell whose disk is lost: marks it `down` and places each of its workspaces on another cell
 * (`to`, else the least-loaded open one), restored from its latest shipped archive. What was
 * written after that archive is lost (the window is PRIM_SHIP_INTERVAL_S plus the time a ship
 * takes); the report says when each archive was taken.
 */
export async function rebuildCell(env: OperatorEnv, id: string, options: { to?: string } = {}): Promise<RebuildReport> {
  const secret = secretOf(env);
  const pool = await openPool(env.DATABASE_URL);
  try {
    if (!(await setCellState(pool, id, "down"))) throw new Error(`no cell '${id}'`);
    const report: RebuildReport = { cell: id, restored: [], empty: [] };
    for (const placement of await placementsOn(pool, id)) {
      const to = options.to ?? (await leastLoaded(pool, id));
      const target = await cellClient(pool, to, secret);
      if (placement.shippedKey !== null) {
        await target.post("/internal/cell/unpack", { workspace: placement.workspace, key: placement.shippedKey });
      } else {
        // Never shipped: it restarts empty there, never from a copy an unfinished move left.
        await target.post("/internal/cell/discard", { workspace: placement.workspace });
        await target.post("/internal/cell/thaw", { workspace: placement.workspace });
      }
      // The re-placement and its `workspace.move` audit entry commit together.
      const replaced = await inTransaction(pool, async (client) => {
        const ok = await replacePlacement(client, placement.workspace, placement.epoch, to);
        if (ok) await recordWorkspaceMove(pool, { workspace: placement.workspace, from: id, to }, client);
        return ok;
      });
      if (!replaced) continue; // moved meanwhile
      if (placement.shippedKey === null || placement.shippedAt === null) {
        report.empty.push({ workspace: placement.workspace, to });
      } else {
        report.restored.push({
          workspace: placement.workspace,
          to,
          snapshot_at: new Date(placement.shippedAt).toISOString(),
          archive: placement.shippedKey,
        });
      }
    }
    return report;
  } finally {
    await pool.end();
  }
}

async function leastLoaded(pool: pg.Pool, except: string): Promise<string> {
  const open = (await listCells(pool)).filter((c) => c.state === "open" && c.id !== except && c.internalUrl !== null);
  open.sort((a, b) => a.workspaces - b.workspaces || a.id.localeCompare(b.id));
  const best = open[0];
  if (best === undefined) throw new Error("no open cell to rebuild onto");
  return best.id;
}
