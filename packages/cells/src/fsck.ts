import { CatalogHub, workspaceExists } from "@prim/db";
import type { ConsistencyReport } from "@prim/engine";
import { notFound } from "@prim/wire";
import type { CellEnv } from "./cell-env.js";
import { blobStores, openCell } from "./cell-storage.js";
import { WorkspaceEngines } from "./workspace-engines.js";

/**
 * `prim admin fsck --workspace W`: the workspace's catalog (Postgres), files (its directory
 * under `PRIM_DATA_DIR`) and blobs (S3 or local) checked against each other, orphans named
 * both ways. It opens the cell as the api does, so it runs where the api's data directory is,
 * with the api stopped (the directory's lock says so otherwise); it changes nothing.
 */
export async function fsckWorkspace(
  env: CellEnv,
  workspace: string,
): Promise<ConsistencyReport & { workspace: string }> {
  const hub = await CatalogHub.open(env.DATABASE_URL);
  try {
    if (!(await workspaceExists(hub.pool, workspace))) throw notFound(`workspace '${workspace}'`);
    const cell = openCell(env);
    const engines = new WorkspaceEngines(cell, hub, { blobsFor: blobStores(env) });
    try {
      return { workspace, ...(await engines.engine(workspace).checkConsistency()) };
    } finally {
      await engines.close();
      await cell.close();
    }
  } finally {
    await hub.close();
  }
}
