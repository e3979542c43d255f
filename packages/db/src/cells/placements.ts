import type pg from "pg";

/*
 * Cells and placements (CLOUD.md, "Scale-out"). A cell is an apps/api process with its own
 * disk; a placement names the one cell that serves a workspace. Every change of a placement
 * goes through these functions and is announced on `prim_catalog` (payload `placement:<id>`),
 * so caches in other processes drop it at once.
 */

export type CellState = "open" | "closed" | "down";
export const CELL_STATES: readonly CellState[] = ["open", "closed", "down"];

export interface CellRow {
  id: string;
  internalUrl: string | null;
  state: CellState;
  /** Workspaces placed on it. */
  workspaces: number;
  seenAt: number;
}

export interface PlacementRow {
  workspace: string;
  cell: string;
  epoch: number;
  /** While a move runs: writes wait until it ends or this instant passes (ms since epoch). */
  frozenUntil: number | null;
  /** The cell a move left, until it has deleted its copy. */
  previousCell: string | null;
  shippedKey: string | null;
  shippedAt: number | null;
}

const NOTIFY_CHANNEL = "prim_catalog";
export const PLACEMENT_NOTICE = "placement:";
/** The notice's workspace when every cached placement and cell address is stale. */
export const ALL_PLACEMENTS = "*";

type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

interface PlacementDbRow {
  workspace_id: string;
  cell_id: string;
  epoch: number;
  frozen_until: Date | null;
  previous_cell_id: string | null;
  shipped_key: string | null;
  shipped_at: Date | null;
}

const PLACEMENT_COLUMNS = "workspace_id, cell_id, epoch, frozen_until, previous_cell_id, shipped_key, shipped_at";

function placementOf(row: PlacementDbRow): PlacementRow {
  return {
    workspace: row.workspace_id,
    cell: row.cell_id,
    epoch: row.epoch,
    frozenUntil: row.frozen_until?.getTime() ?? null,
    previousCell: row.previous_cell_id,
    shippedKey: row.shipped_key,
    shippedAt: row.shipped_at?.getTime() ?? null,
  };
}

/** Tells every process that `workspace`'s placement changed. */
export async function announcePlacement(db: Queryable, workspace: string): Promise<void> {
  await db.query("SELECT pg_notify($1, $2)", [NOTIFY_CHANNEL, `${PLACEMENT_NOTICE}${workspace}`]);
}

/**
 * A cell says it is alive and where its internal listener is. A cell that was `down` and comes
 * back is `closed`: what it held was rebuilt elsewhere, it takes nothing new until an operator
 * opens it.
 */
export async function registerCell(db: Queryable, id: string, internalUrl: string | null): Promise<void> {
  await db.query(
    `INSERT INTO cells (id, internal_url) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET internal_url = COALESCE(EXCLUDED.internal_url, cells.internal_url), seen_at = now(),
       state = CASE WHEN cells.state = 'down' THEN 'closed' ELSE cells.state END`,
    [id, internalUrl],
  );
  // Its address may have changed (a restart on another port or pod IP): every process drops
  // the cells it cached.
  await announcePlacement(db, ALL_PLACEMENTS);
}

export async function listCells(db: Queryable): Promise<CellRow[]> {
  const { rows } = await db.query<{
    id: string;
    internal_url: string | null;
    state: CellState;
    workspaces: string;
    seen_at: Date;
  }>(
    `SELECT c.id, c.internal_url, c.state, c.seen_at, count(p.workspace_id) AS workspaces
     FROM cells c LEFT JOIN placements p ON p.cell_id = c.id GROUP BY c.id ORDER BY c.id`,
  );
  return rows.map((r) => ({
    id: r.id,
    internalUrl: r.internal_url,
    state: r.state,
    workspaces: Number(r.workspaces),
    seenAt: r.seen_at.getTime(),
  }));
}

export async function readCell(db: Queryable, id: string): Promise<CellRow | null> {
  return (await listCells(db)).find((c) => c.id === id) ?? null;
}

export async function setCellState(db: Queryable, id: string, state: CellState): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE cells SET state = $2 WHERE id = $1", [id, state]);
  return rowCount === 1;
}

/**
 * Places `workspace` on the open cell with the fewest workspaces (ties: the smallest id), unless
 * it is placed already; answers its placement, or null when no cell is open (the first cell
 * that serves it claims it: `claimPlacement`).
 */
export async function placeWorkspace(db: Queryable, workspace: string): Promise<PlacementRow | null> {
  const { rowCount } = await db.query(
    `INSERT INTO placements (workspace_id, cell_id)
     SELECT $1, c.id FROM cells c LEFT JOIN placements p ON p.cell_id = c.id
     WHERE c.state = 'open' GROUP BY c.id ORDER BY count(p.workspace_id), c.id LIMIT 1
     ON CONFLICT (workspace_id) DO NOTHING`,
    [workspace],
  );
  // A new placement is a change too: the edge's map (@prim/cells edge/) learns of it.
  if (rowCount === 1) await announcePlacement(db, workspace);
  return readPlacement(db, workspace);
}

/** The placement of `workspace`, placing it on `cell` when it has none (a workspace made before any cell). */
export async function claimPlacement(db: Queryable, workspace: string, cell: string): Promise<PlacementRow | null> {
  const { rowCount } = await db.query(
    `INSERT INTO placements (workspace_id, cell_id) SELECT id, $2 FROM workspaces WHERE id = $1
     ON CONFLICT (workspace_id) DO NOTHING`,
    [workspace, cell],
  );
  if (rowCount === 1) await announcePlacement(db, workspace);
  return readPlacement(db, workspace);
}

export async function readPlacement(db: Queryable, workspace: string): Promise<PlacementRow | null> {
  const { rows } = await db.query<PlacementDbRow>(
    `SELECT ${PLACEMENT_COLUMNS} FROM placements WHERE workspace_id = $1`,
    [workspace],
  );
  return rows[0] === undefined ? null : placementOf(rows[0]);
}

/** Every placement, workspace → cell (the edge's map watcher loads them all at start). */
export async function listPlacements(db: Queryable): Promise<{ workspace: string; cell: string }[]> {
  const { rows } = await db.query<{ workspace_id: string; cell_id: string }>(
    "SELECT workspace_id, cell_id FROM placements ORDER BY workspace_id",
  );
  return rows.map((r) => ({ workspace: r.workspace_id, cell: r.cell_id }));
}

export async function placementsOn(db: Queryable, cell: string): Promise<PlacementRow[]> {
  const { rows } = await db.query<PlacementDbRow>(
    `SELECT ${PLACEMENT_COLUMNS} FROM placements WHERE cell_id = $1 ORDER BY workspace_id`,
    [cell],
  );
  return rows.map(placementOf);
}

/**
 * Freezes `workspace` on `cell` for a move, for `leaseMs` (the mover renews nothing: a move that
 * outlives its lease cannot flip). Answers the frozen placement, or null when the workspace is
 * not on `cell` or another move holds it.
 */
export async function freezePlacement(
  db: Queryable,
  workspace: string,
  cell: string,
  leaseMs: number,
): Promise<PlacementRow | null> {
  const { rows } = await db.query<PlacementDbRow>(
    `UPDATE placements SET frozen_until = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
     WHERE workspace_id = $1 AND cell_id = $2 AND (frozen_until IS NULL OR frozen_until < now())
     RETURNING ${PLACEMENT_COLUMNS}`,
    [workspace, cell, leaseMs],
  );
  if (rows[0] === undefined) return null;
  await announcePlacement(db, workspace);
  return placementOf(rows[0]);
}

/**
 * Moves `workspace` to `to`: only the epoch that was frozen, and only while its lease holds (a
 * mover that stalled past it must not flip a workspace its source has served again since).
 */
export async function flipPlacement(
  db: Queryable,
  workspace: string,
  epoch: number,
  to: string,
  /** The move's archive: the workspace as the target starts serving it (what a rebuild restores). */
  archive: { key: string; takenAt: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE placements SET previous_cell_id = cell_id, cell_id = $3, epoch = epoch + 1, frozen_until = NULL,
       shipped_key = $4, shipped_at = $5, updated_at = now()
     WHERE workspace_id = $1 AND epoch = $2 AND frozen_until > now()`,
    [workspace, epoch, to, archive.key, new Date(archive.takenAt)],
  );
  if (rowCount !== 1) return false;
  await announcePlacement(db, workspace);
  return true;
}

/** Ends a freeze without moving (an aborted move). */
export async function thawPlacement(db: Queryable, workspace: string, epoch: number): Promise<void> {
  await db.query(
    "UPDATE placements SET frozen_until = NULL, updated_at = now() WHERE workspace_id = $1 AND epoch = $2",
    [workspace, epoch],
  );
  await announcePlacement(db, workspace);
}

/**
 * Re-places a workspace of a lost cell on `to` (a rebuild): only the epoch read, so a rebuild
 * racing a move changes nothing twice.
 */
export async function replacePlacement(db: Queryable, workspace: string, epoch: number, to: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE placements SET previous_cell_id = cell_id, cell_id = $3, epoch = epoch + 1, frozen_until = NULL, updated_at = now()
     WHERE workspace_id = $1 AND epoch = $2`,
    [workspace, epoch, to],
  );
  if (rowCount !== 1) return false;
  await announcePlacement(db, workspace);
  return true;
}

/** The workspaces `cell` still holds a copy of after they moved away. */
export async function leftBehind(db: Queryable, cell: string): Promise<string[]> {
  const { rows } = await db.query<{ workspace_id: string }>(
    "SELECT workspace_id FROM placements WHERE previous_cell_id = $1 AND cell_id <> $1",
    [cell],
  );
  return rows.map((r) => r.workspace_id);
}

/** `cell` deleted its copy of `workspace`. */
export async function markReleased(db: Queryable, workspace: string, cell: string): Promise<void> {
  await db.query("UPDATE placements SET previous_cell_id = NULL WHERE workspace_id = $1 AND previous_cell_id = $2", [
    workspace,
    cell,
  ]);
}

/** Records the latest archive `cell` shipped of `workspace` (only while it still serves it). */
export async function recordShipped(
  db: Queryable,
  workspace: string,
  cell: string,
  key: string,
  takenAt: number,
): Promise<void> {
  await db.query("UPDATE placements SET shipped_key = $3, shipped_at = $4 WHERE workspace_id = $1 AND cell_id = $2", [
    workspace,
    cell,
    key,
    new Date(takenAt),
  ]);
}

/** Whether `workspace` exists (fsck checks one before it opens its files). */
export async function workspaceExists(db: Queryable, workspace: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM workspaces WHERE id = $1", [workspace]);
  return rowCount === 1;
}

/** The ids of `workspace`'s groups (their wrapped vault keys travel with its archive). */
export async function groupIdsOf(db: Queryable, workspace: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM groups WHERE workspace_id = $1", [workspace]);
  return rows.map((r) => r.id);
}
