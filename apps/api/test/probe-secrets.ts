// The probe's switch for "allow secret export" (issue 35, item 3): what a workspace's owner
// turns on to let vault values leave in exports to a chosen recipient.
import type { ProbeCloud, ProbeWorkspace } from "./probe-cloud.js";

/** Turns on secret export for `ws`, as its owner does. */
export async function allowSecretExport(_cloud: ProbeCloud, _ws: ProbeWorkspace): Promise<void> {
  // The setting does not exist yet (helper B builds it): exports carry values unconditionally.
}
