/*
 * `prim admin`'s commands and their usage (CLOUD.md, Commands). `--help` (or `-h`) after any
 * of them prints its usage and connects nowhere; `prim admin --help` prints them all.
 */

const DB = "env DATABASE_URL (or --database-url U)";
const CELL_ENV = `${DB}, PRIM_INTERNAL_SECRET (the cells' shared secret)`;

/** Each command: its synopsis, then what it does and what it prints. */
export const ADMIN_USAGE: Readonly<Record<string, string>> = {
  "workspace create": `prim admin workspace create --name N [--plan starter|pro|enterprise] [--owner EMAIL]
                           [--rps R --burst B] --json
  A workspace and its first workspace key → { workspace: { id, name, plan }, key, key_id }.
  --rps/--burst: an enterprise workspace's own rate. ${DB}`,
  "workspace move": `prim admin workspace move --workspace W --to CELL [--lease-ms N] --json
  Moves a workspace to another cell (freeze, quiesce, pack, unpack, flip, verify, release) →
  { workspace, from, to, moved, epoch, archive: { key, bytes }, frozen_ms, released }; progress
  on stderr. --lease-ms: how long the freeze holds without this process (default 60000).
  --crash-after STEP: the tests' fault injection. ${CELL_ENV}`,
  "workspace secret-export": `prim admin workspace secret-export --workspace W --on|--off --json
  Whether group archives may carry the workspace's vault values for another key (off by
  default; audited as secret_export.enable/disable, actor admin) →
  { workspace: { id, name, secret_export } }. ${DB}`,
  "workspace deleted": `prim admin workspace deleted --json
  The workspaces deleted by their owners (the dashboard) within the audit retention (30 days),
  newest first → { deleted: [{ id, name, actor, deleted_at, detail: { plan, members, groups,
  keys_revoked, connections_ended, invitations_withdrawn, subscription_canceled } }] }. ${DB}`,
  "key create": `prim admin key create --workspace W [--group G] [--tools "db_query,fs_*"] [--name N] [--read-only]
    [--expires-in 1h | --expires-at 2027-01-01T00:00:00Z] [--ip-allow "10.0.0.0/8,::1/128"]
    [--budget 1000 | --budget 1000/day | --budget 1000/month] --json
  A workspace key, or one scoped to a group and tools; --read-only: every call that writes is
  refused (403 forbidden), whatever its tools; past its expiry it answers 401; from a client
  address outside --ip-allow, 403; --budget caps its metered operations (in total, or per UTC
  day or month) → { id, key, group, tools, read_only, expires_at, ip_allow, budget }. ${DB}`,
  "key revoke": `prim admin key revoke --id K --json
  Revokes a key; every app process drops it through Redis → { id, revoked_at }. ${DB}, REDIS_URL`,
  "plan set": `prim admin plan set --workspace W --plan starter|pro|enterprise [--rps R --burst B] --json
  Changes the plan (the limiter's cached plan is dropped) → { workspace: { id, name, plan, rps, burst } }.
  ${DB}, REDIS_URL`,
  usage: `prim admin usage --workspace W --json
  This month's usage → { workspace: { id, name, plan }, month, operations, storage_bytes, days }.
  ${DB}, REDIS_URL (the live counter)`,
  "user create": `prim admin user create --email E --password P [--name N] [--workspace W --role R] --json
  An email-and-password account the dashboard signs in with; with --workspace, a member of it
  (role member unless given) → { id, email, workspace, role }. ${DB}`,
  "cell list": `prim admin cell list --json
  The cells → { cells: [{ id, internal_url, state, workspaces, seen_at }] }. ${DB}`,
  "cell open": `prim admin cell open --id C --json
  Lets new workspaces be placed on the cell → { id, state }. ${DB}`,
  "cell close": `prim admin cell close --id C --json
  Places no new workspace on the cell (it serves those it has) → { id, state }. ${DB}`,
  "cell rebuild": `prim admin cell rebuild --id C [--to C2] --json
  A cell whose disk is lost: marks it down and restores each of its workspaces on another cell
  from its latest shipped archive → { cell, restored: [{ workspace, to, snapshot_at, archive }],
  empty: [{ workspace, to }] }. ${CELL_ENV}`,
  fsck: `prim admin fsck --workspace W --json
  A workspace's catalog, files and blobs checked against each other → { workspace, ok, primitives,
  snapshots, missing_files, orphan_files, missing_snapshots, orphan_snapshots, blobs }; exits 1
  when not ok. Run where the api's data directory is, with the api stopped; changes nothing.
  ${DB}, and the api's PRIM_DATA_DIR, PRIM_BLOBS, S3_*, PRIM_MASTER_KEY`,
  "stripe sync": `prim admin stripe sync --json
  Makes Stripe hold Pro's product, meters and prices (idempotent) → what Stripe holds and what
  this run created. env STRIPE_SECRET_KEY (STRIPE_API_URL: a stand-in)`,
};

export const ADMIN_COMMANDS = Object.keys(ADMIN_USAGE);

/** Whether the arguments ask for help. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.includes("--help") || args.includes("-h");
}

/** The usage of every command whose name starts with `prefix` ("" : all of them). */
export function adminUsage(prefix = ""): string {
  const commands = ADMIN_COMMANDS.filter((c) => prefix === "" || c === prefix || c.startsWith(`${prefix} `));
  const head = `Usage: prim admin <command> [options] --json (each prints one JSON object)\n\nCommands: ${ADMIN_COMMANDS.join(", ")}\n\n`;
  return `${prefix === "" ? head : ""}${commands.map((c) => ADMIN_USAGE[c]).join("\n\n")}`;
}
