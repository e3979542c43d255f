import { parseArgs } from "node:util";
import { databaseUrl } from "./env.js";

/**
 * `prim migrate`: creates the control-plane database if needed and applies pending SQL
 * migrations (packages/db). @prim/db is imported here, on use, so `prim dev` never loads pg.
 */
export async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { "database-url": { type: "string" } } });
  const url = values["database-url"] ?? databaseUrl();
  const { migrate, redact } = await import("@prim/db");
  const { applied } = await migrate({ databaseUrl: url, log: (line) => console.log(`prim migrate: ${line}`) });
  console.log(
    applied.length === 0
      ? `prim migrate: ${redact(url)} is up to date`
      : `prim migrate: applied ${applied.length} migration${applied.length === 1 ? "" : "s"} to ${redact(url)}`,
  );
}
