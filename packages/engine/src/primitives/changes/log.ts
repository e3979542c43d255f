import type { ChangeLog } from "../../sqlite/change-log.js";

export * from "../../sqlite/change-log.js";

/** The change log `open` was given; every type but db (which keeps its own file) has one. */
export function logOf(env: { changes: ChangeLog | null }): ChangeLog {
  if (env.changes === null) throw new Error("this primitive's file has no change log");
  return env.changes;
}
