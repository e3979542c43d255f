import { readSecretExport } from "@prim/db";
import type { Principal, SecretExportPolicy } from "@prim/engine";
import type pg from "pg";

/**
 * The cloud's rule for vault values leaving a workspace in a group archive for another key
 * (CLOUD.md, Credentials; issue 35 item 3): only while the workspace's "allow secret export" is
 * on, and only for a workspace key (`key:<id>`, account-level) or an owner's dashboard session
 * (`user:<id>` whose role is owner — admins act as account principals too, but may not). Scoped
 * keys and OAuth tokens never reach the export at all (it is account-only). Read from Postgres
 * on each export, not cached: an export is rare and heavy, and a switch-off must hold at once.
 */
export class PgSecretExportPolicy implements SecretExportPolicy {
  constructor(private readonly pool: pg.Pool) {}

  async allows(principal: Principal): Promise<boolean> {
    if (principal.kind !== "account") return false;
    const user = principal.actor.startsWith("user:") ? principal.actor.slice("user:".length) : null;
    if (user === null && !principal.actor.startsWith("key:")) return false; // e.g. the operator
    const setting = await readSecretExport(this.pool, principal.workspace, user);
    if (setting === null || !setting.enabled) return false;
    return user === null || setting.role === "owner";
  }
}
