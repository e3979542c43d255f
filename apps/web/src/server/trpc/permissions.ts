import type { Role } from "./init";

const ALL: readonly Role[] = ["owner", "admin", "member", "billing"];
const DATA: readonly Role[] = ["owner", "admin", "member"];
const ADMINS: readonly Role[] = ["owner", "admin"];
const BILLING: readonly Role[] = ["owner", "billing"];
const OWNERS: readonly Role[] = ["owner"];

/**
 * Who may call what (CLOUD.md, Credentials: `owner`, `admin` — keys, members, groups —,
 * `member` — data browser, read the keys list —, `billing` — plan and invoices only). The
 * procedures take their roles from here and the permission tests iterate over it.
 */
export const PERMISSIONS = {
  "workspace.rename": ADMINS,
  "workspace.delete": OWNERS,
  "workspace.connect": DATA,
  "workspace.overview": DATA,
  "members.list": ALL,
  "members.remove": ADMINS,
  "members.setRole": ADMINS,
  "members.leave": ALL,
  "members.invite": ADMINS,
  "members.invitations": ADMINS,
  "members.revokeInvitation": ADMINS,
  "keys.list": DATA,
  "keys.create": ADMINS,
  "keys.revoke": ADMINS,
  "connections.list": DATA,
  "connections.disconnect": DATA,
  "data.groups": DATA,
  "data.createGroup": ADMINS,
  "data.primitives": DATA,
  "data.createPrimitive": DATA,
  "data.deletePrimitive": ADMINS,
  "data.kvList": DATA,
  "primitive.get": DATA,
  "primitive.pause": ADMINS,
  "primitive.update": ADMINS,
  "primitive.fork": DATA,
  "primitive.snapshots": DATA,
  "primitive.snapshot": DATA,
  "primitive.restore": DATA,
  "primitive.dbQuery": DATA,
  "primitive.browse": DATA,
  "primitive.act": DATA,
  "primitive.preview": DATA,
  "primitive.requeue": DATA,
  "primitive.sign": DATA,
  "secretRequest.get": DATA,
  // Storing a secret is account-level in the engine (owners and admins).
  "secretRequest.set": ADMINS,
  "secretRequest.decline": ADMINS,
  "usage.summary": ALL,
  "audit.list": ADMINS,
  // Account-level on the API (a workspace key): owners and admins, the delivery log too.
  "webhooks.list": ADMINS,
  "webhooks.create": ADMINS,
  "webhooks.delete": ADMINS,
  "webhooks.enable": ADMINS,
  "webhooks.deliveries": ADMINS,
  "webhooks.redeliver": ADMINS,
  "billing.summary": BILLING,
  "billing.checkout": BILLING,
  "billing.portal": BILLING,
  "settings.secretExport": OWNERS,
  "settings.setSecretExport": OWNERS,
} as const satisfies Record<string, readonly Role[]>;

/** A procedure's name in PERMISSIONS (`members.list`, …): what `workspaceProcedure` checks. */
export type Permission = keyof typeof PERMISSIONS;
