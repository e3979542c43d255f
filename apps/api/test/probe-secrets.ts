// The probe's switch for "allow secret export" (issue 35, item 3): what a workspace's owner
// turns on (dashboard toggle, or the operator's `prim admin workspace secret-export`) to let
// vault values leave in exports to a key of the caller's choosing.
import { setSecretExport } from "@prim/db";
import type { ProbeCloud, ProbeWorkspace } from "./probe-cloud.js";

/** Turns on secret export for `ws`, as the operator's command does. */
export async function allowSecretExport(cloud: ProbeCloud, ws: ProbeWorkspace): Promise<void> {
  await setSecretExport(cloud.pool, { workspace: ws.id, enabled: true, actor: "admin" });
}
