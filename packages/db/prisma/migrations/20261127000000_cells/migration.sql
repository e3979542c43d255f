-- Scale-out (CLOUD.md, "Scale-out"): the cells (apps/api processes, each with its own disk) and
-- which cell serves each workspace. A placement is the one truth about who serves: a cell
-- serves a workspace only while its row names that cell (apps/api `placement-gate.ts`).
CREATE TABLE "cells" (
  "id" TEXT NOT NULL,
  -- Where other processes reach the cell's internal listener (forwarding, moves).
  "internal_url" TEXT,
  -- open: takes new workspaces; closed: serves its own, takes none; down: lost (rebuild it).
  "state" TEXT NOT NULL DEFAULT 'open',
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "cells_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "cells_state_check" CHECK ("state" IN ('open', 'closed', 'down'))
);

CREATE TABLE "placements" (
  "workspace_id" TEXT NOT NULL,
  "cell_id" TEXT NOT NULL,
  -- Bumped by every change of cell; a move flips only the epoch it froze.
  "epoch" INTEGER NOT NULL DEFAULT 1,
  -- A move in progress: writes wait until the move ends or this passes (a dead mover's lease).
  "frozen_until" TIMESTAMPTZ(3),
  -- The cell a move left, until it has deleted its copy.
  "previous_cell_id" TEXT,
  -- The latest archive of the workspace's files shipped to S3, and when it was taken.
  "shipped_key" TEXT,
  "shipped_at" TIMESTAMPTZ(3),
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "placements_pkey" PRIMARY KEY ("workspace_id"),
  CONSTRAINT "placements_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "placements_cell_id_fkey" FOREIGN KEY ("cell_id") REFERENCES "cells"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE INDEX "placements_cell_id_idx" ON "placements"("cell_id");
