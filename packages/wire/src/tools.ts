import type { PrimitiveType } from "./types.js";

/**
 * What a client is told about one tool of the allowlist: its name (the allowlist's, the name a
 * key's `tools` and an OAuth grant list), title, description, and the type of primitive it works
 * on. Each tool is declared here once; @prim/mcp serves each with its input schema and
 * operations (and fails its start on a tool missing from either side), and the dashboard's
 * consent screen lists and checks this catalog without loading @prim/mcp.
 */
export interface ToolInfo {
  name: string;
  title: string;
  /** One line for the person granting access (the consent screen), beside the title. */
  summary: string;
  /** For the model: how to use the tool. */
  description: string;
  /**
   * "read" when every operation the tool runs only reads, else "write" (a tool is "write" when any
   * of its operations may write). Declared here for the consent screen's Read/Write badges and
   * read-only preset; @prim/mcp's tools-access test fails when it differs from what the engine's
   * operations declare (their `access`).
   */
  access: "read" | "write";
  /** Type of the primitive named by the `primitive` argument (absent: the tool takes none). */
  type?: PrimitiveType;
  /** True when `primitive` may name a primitive of any type (snapshots, forks). */
  anyType?: boolean;
}

const batchNote =
  "At most 100 entries; each is answered in order, as its job or its own `{ error, status }` (a bad entry fails only itself). Each entry counts as one operation.";

/** Every tool of the allowlist, in the order MCP lists them. */
export const TOOL_CATALOG = [
  {
    name: "primitive_list",
    access: "read",
    title: "List primitives",
    summary: "See which data stores the group has.",
    description:
      "Lists the data stores (primitives) in this group: id, name, type (db, fs, queue, memory, vault, kv, storage), size and whether it is paused. Call this first to find what exists.",
  },
  {
    name: "primitive_create",
    access: "write",
    title: "Create a primitive",
    summary: "Create new data stores in the group.",
    description:
      "Creates a new data store in this group. Types: db (SQL database on SQLite), fs (files and directories), queue (job queues and topics), memory (agent memories with recall), vault (secrets usable in outbound requests without being revealed), kv (key-value), storage (objects with signed URLs). Names: 1-63 chars of a-z 0-9 - _ . starting with a letter or digit, unique per type in the group.",
  },
  {
    name: "primitive_snapshot",
    access: "write",
    title: "Snapshot or restore a primitive",
    summary: "Take snapshots of a store, and restore one in place (its data replaced).",
    description:
      'Takes a point-in-time snapshot of a primitive (action "create", optional label `name`), lists its snapshots ("list"), or restores one in place ("restore": the primitive keeps its id and its data becomes exactly the snapshot\'s; `snapshot` is the label or the snapshot id).',
    anyType: true,
  },
  {
    name: "primitive_fork",
    access: "write",
    title: "Fork a primitive",
    summary: "Copy a store, or one of its snapshots, into a new store.",
    description:
      "Copies a primitive (its live data, or a snapshot) into a new primitive in this group, for experiments that must not touch the original. Default name `<name>-fork-<6 chars>`. Large files and objects are shared, not copied; a queue copy releases leases.",
    anyType: true,
  },
  {
    name: "changes_read",
    access: "read",
    title: "Read a change feed",
    summary: "See what changed in a store (keys, paths, ids; never values).",
    description:
      "Lists committed changes of a primitive in commit order: { data: [{ seq, ts, op, key|path|id|name, version?, size?, detail?, cursor }], cursor }, without values (never a secret's value). Pass the answer's `cursor` as `after` to continue; `wait` (e.g. \"20s\", at most 30s) waits for the next change when there is none. Without `primitive`, the whole group's changes are merged (each entry names its primitive). A cursor older than the retention window (7 days or 100,000 entries) is a conflict naming the oldest cursor still held.",
    anyType: true,
  },
  {
    name: "db_query",
    access: "read",
    title: "Query a SQL database (read-only)",
    summary: "Run read-only SQL queries; see tables and columns.",
    description:
      'Runs one read-only SQL statement (SQLite dialect) and returns { columns, rows, rows_affected, last_insert_rowid, truncated }. Statements that write are refused (use db_exec). Also "tables" (list tables and views) and "table" (columns and CREATE SQL of `table`). Results are capped at 10,000 rows / 10 MiB; BLOBs come back base64.',
    type: "db",
  },
  {
    name: "db_exec",
    access: "write",
    title: "Change a SQL database",
    summary: "Run SQL that changes data or the schema.",
    description:
      "Runs one SQL statement that may write (`sql`, `params`), or several in one transaction (`statements`: all succeed or none; the error names the failing index). SQLite dialect; ATTACH, transaction control and engine pragmas are refused. Statements stop after 5 s. `enqueue` sends jobs into queues of this group exactly once, only if the write commits (needs queue_send too).",
    type: "db",
  },
  {
    name: "db_branch",
    access: "write",
    title: "Manage database branches",
    summary: "Create, promote and delete database branches.",
    description:
      'Branches are copies of the database to try changes on: "create" (`name`), "list", "promote" (`name`; makes main equal to the branch; refused with branch_conflict if main changed since, unless `force`), "delete" (`name`). Query a branch with the `branch` argument of db_query / db_exec.',
    type: "db",
  },
  {
    name: "fs_read",
    access: "read",
    title: "Read files and directories",
    summary: "Read files and list directories.",
    description:
      "Reads a file (its entry and `content`: { text } when UTF-8, else { base64 }; up to 1 MiB) or lists a directory ({ data: entries }; `recursive: true` for the whole subtree). `stat: true` returns just the entry (path, name, type, size, mode, mtime, etag).",
    type: "fs",
  },
  {
    name: "fs_write",
    access: "write",
    title: "Write, move, delete files; make directories",
    summary: "Write, move and delete files; make directories.",
    description:
      '"write" (default): writes `content` to `path` (parents created; `mode` like "644"). "mkdir": makes a directory (and parents). "move": renames `from` to `to` (`overwrite` to replace). "delete": removes `path` (`recursive` for a non-empty directory). A file or directory in the way is fs_conflict.',
    type: "fs",
  },
  {
    name: "fs_search",
    access: "read",
    title: "Find files",
    summary: "Search the text of files; find paths by pattern.",
    description:
      '"search" (default): full-text search of text files for the words in `q` (all must appear; `word*` for a prefix), optionally under `path`; returns { path, snippet }. "glob": paths matching `pattern` (`*`, `**`, `?`, `[...]`, `{a,b}`).',
    type: "fs",
  },
  {
    name: "fs_fork",
    access: "write",
    title: "Copy a directory tree",
    summary: "Copy files and directory trees.",
    description:
      "Copies the file or directory `from` to `to` inside the same store (default `<from>-fork-<6 chars>`); files over 64 KiB are shared, not copied. Returns { path, files }.",
    type: "fs",
  },
  {
    name: "queue_send",
    access: "write",
    title: "Send jobs",
    summary: "Send jobs to queues and publish to topics.",
    description: `"send" (default): adds a job with JSON \`body\` to \`queue\`; optional \`delay\`, \`priority\` (higher first), \`max_attempts\` (default 5) and \`dedupe_key\` (a pending job with the same key is returned instead, with deduplicated: true). "publish": sends \`body\` to every queue subscribed to \`topic\`. "send_batch": sends \`messages\` to \`queue\` in one transaction; "publish_batch": publishes each of \`messages\` to \`topic\`. ${batchNote}`,
    type: "queue",
  },
  {
    name: "queue_receive",
    access: "write",
    title: "Receive and inspect jobs",
    summary: "Take jobs from queues (leasing them), look at jobs, manage topic subscriptions.",
    description:
      '"receive" (default): leases up to `max` ready jobs of `queue` (highest priority, then oldest), each with a lease_token; settle them with queue_ack before `lease` runs out (default 30s) or they become ready again. `wait` long-polls up to 30s for a job. Also "queues" (counts per queue), "list" (jobs of `queue`, optional `status`), "get" (`job`), "subscribe"/"unsubscribe" (`queue` to `topic`).',
    type: "queue",
  },
  {
    name: "queue_ack",
    access: "write",
    title: "Settle jobs",
    summary: "Settle, retry, requeue and purge jobs.",
    description: `Settles a received job with its \`lease_token\`: "ack" (done), "retry" (ready again after \`in\`, or a backoff), "fail" (retry while attempts remain, else dead; record \`error\`), "dead". Also "heartbeat" (extend the lease by \`extend\`), "requeue" (a dead job back to ready), "purge" (delete done or dead jobs of \`queue\`, optionally \`older_than\`), "ack_batch" (settle each of \`acks\` on its own). A lease that ran out answers lease_expired. ${batchNote}`,
    type: "queue",
  },
  {
    name: "memory_remember",
    access: "write",
    title: "Remember",
    summary: "Store new memories.",
    description:
      "Stores a memory: `text` with its `kind`, optional `tags`, `owner` and `metadata`. Returns the record with its id and `version`. With `id`, changes that memory instead (a new version; tags, owner and metadata left out stay); add `if_version` to change it only if nobody changed it since you read it.",
    type: "memory",
  },
  {
    name: "memory_recall",
    access: "read",
    title: "Recall memories",
    summary: "Search and read memories.",
    description:
      '"recall" (default): the memories most relevant to `query`, ranked with a `score` (word match, fuzzy match for typos, recency); filter by `kinds`, `tags`, `owner`, creation time (`since`, `until`) and `min_score`; `as_of` recalls the memories as they were at that time. "list": newest first (filters `kind`, `tag`, `owner`). "get": one memory by `id`. "history": the versions of memory `id`, newest first (create, update, supersede, forget). Superseded memories are left out unless `include_superseded`.',
    type: "memory",
  },
  {
    name: "memory_forget",
    access: "write",
    title: "Forget, supersede or consolidate memories",
    summary: "Delete, supersede and merge memories.",
    description:
      '"forget": forgets memory `id` (kept only in its history, for 7 days). "supersede": replaces memory `id` with new `text` (the old one is kept, marked superseded, and left out of recall). "consolidate": finds near-duplicate memories (same kind and owner, similarity ≥ `threshold`) and supersedes all but the newest of each group.',
    type: "memory",
  },
  {
    name: "vault_list",
    access: "read",
    title: "List secrets and grants",
    summary: "See secret names, versions and where each may be sent \u2014 never the values.",
    description:
      '"secrets" (default): the secret names with their version and grant (which hosts and methods may receive them). "grants": the grants. Values are never shown; use vault_use to make a request with a secret.',
    type: "vault",
  },
  {
    name: "vault_use",
    access: "write",
    title: "Make a request with a secret",
    summary: "Send HTTP requests with a secret attached, without seeing its value.",
    description:
      "Makes an HTTP request to `url` with a stored secret injected as `Authorization: Bearer <secret>` (`auth: { bearer: NAME }`), without you ever seeing the value. Only hosts and methods the secret's grant allows. Returns { status, headers, body } with the secret redacted.",
    type: "vault",
  },
  {
    name: "vault_request_secret",
    access: "write",
    title: "Ask a person for a secret",
    summary: "Ask a person to store a secret in the vault; the agent never sees the value.",
    description:
      "Asks a person to store the secret `name` in the vault, saying why (`reason`, shown to them) and, optionally, where it may be sent (`allow: { hosts, methods? }`, the grant set with it). The person is shown a page (URL-mode elicitation) where they type the value, which goes straight into the vault: you never see it. Waits until they set or decline it (or it expires after 15 minutes) and returns { name, set, status }, never the value; then use it with vault_use. A client that cannot open a URL elicitation gets an error with the URL to give the person; call again with `request` (its id) to wait for their answer.",
    type: "vault",
  },
  {
    name: "kv_get",
    access: "read",
    title: "Read keys",
    summary: "Read keys.",
    description:
      "Reads one key (`key`) or several (`keys`) from a key-value store. Returns each entry with value, encoding, version and expires_at; a missing key is a not_found error (with `keys`, missing ones come back as null).",
    type: "kv",
  },
  {
    name: "kv_list",
    access: "read",
    title: "List keys",
    summary: "List keys, and their values if asked.",
    description: "Lists keys in byte order, optionally under a `prefix`; `values: true` includes the values. Paged.",
    type: "kv",
  },
  {
    name: "kv_set",
    access: "write",
    title: "Write keys",
    summary: "Set keys and add to counters.",
    description:
      'Sets a key ("set": `key`, `value`, optional `ttl`, `encoding`, `if_version` — 0 means the key must not exist yet), several keys ("mset": `items`, at most 100, all-or-nothing unless `atomic: false`), or adds to an integer ("incr": `key`, `by`).',
    type: "kv",
  },
  {
    name: "kv_delete",
    access: "write",
    title: "Delete keys",
    summary: "Delete keys.",
    description: "Deletes one key (`key`, optional `if_version`) or several (`keys`).",
    type: "kv",
  },
  {
    name: "storage_list",
    access: "read",
    title: "List objects",
    summary: "List objects.",
    description:
      'Lists objects (key, size, etag, content_type, metadata, dates) in key order, optionally under a `prefix`; with `delimiter: "/"` it also returns common `prefixes` like folders. Paged.',
    type: "storage",
  },
  {
    name: "storage_read",
    access: "read",
    title: "Read an object",
    summary: "Read objects (up to 1 MiB each).",
    description:
      "Reads an object: its info and `content` ({ text } when UTF-8, else { base64 }), up to 1 MiB; larger objects answer payload_too_large — use storage_sign for a download URL. `stat: true` returns only the info.",
    type: "storage",
  },
  {
    name: "storage_write",
    access: "write",
    title: "Write, copy or delete objects",
    summary: "Upload, copy and delete objects.",
    description:
      '"put" (default): writes `content` (utf8 text, or base64 with `encoding: "base64"`) at `key`, with optional `content_type` and string `metadata`. "copy": copies `from` to `to`. "delete": removes `key`.',
    type: "storage",
  },
  {
    name: "storage_sign",
    access: "write",
    title: "Make a signed URL",
    summary: "Make links anyone can use to download or upload an object; revoke them all.",
    description:
      '"presign" (default): a URL anyone can use without credentials to GET (download) or PUT (upload) one object until it expires (`expires_in`, default 1h, at most 7d). "revoke": invalidates every signed URL of the store.',
    type: "storage",
  },
] as const satisfies readonly ToolInfo[];

/** A tool's name (`kv_get`, …). */
export type ToolName = (typeof TOOL_CATALOG)[number]["name"];

/** The catalog's entry for `name`. */
export function toolInfo(name: ToolName): ToolInfo {
  const info = TOOL_CATALOG.find((tool) => tool.name === name);
  if (info === undefined) throw new Error(`unknown tool ${name}`);
  return info;
}

/**
 * A tool over the control plane rather than an engine operation (minted keys, issue 41): its
 * effects are declared here, as an operation declares its own, for its MCP annotations.
 */
export interface ControlToolInfo extends ToolInfo {
  /** A write that may delete or overwrite what exists. */
  destructive: boolean;
  /** A write whose repetition changes nothing more. */
  idempotent: boolean;
}

/**
 * The key tools (cloud MCP only; `POST/GET/DELETE /v1/keys` over REST): an agent mints narrower
 * keys for its sub-agents, lists them and revokes them. Only a `pk_` API key may use them (an
 * OAuth or `pa_` token is refused 403 `forbidden`), so they are not on the consent screen's
 * list (`TOOL_CATALOG`); a key's tool allowlist grants them like any tool (`key_*`). A read-only
 * credential may list but neither mint nor revoke. Each call is rate-limited per key as
 * `KEY_MANAGEMENT_RATE_AS` and counted as no operation (spec: "What counts as an operation").
 */
export const KEY_TOOL_CATALOG = [
  {
    name: "key_mint",
    access: "write",
    destructive: false,
    idempotent: false,
    title: "Mint a narrower key",
    summary: "Make API keys for sub-agents, each at most as wide as this one.",
    description:
      "Mints a new API key (`pk_…`, in `key`, shown this once: hand it on, it cannot be read again) that is a child of this credential's key and at most as wide on every property: `group`, `tools`, `read_only`, `expires_at`, `ip_allow`, `budget` (required when this key has one: the same kind, carved out of what it has left); an omitted property is this key's own. Anything wider is refused (forbidden, naming the property). Revoking this key later revokes the child too.",
  },
  {
    name: "key_list",
    access: "read",
    destructive: false,
    idempotent: true,
    title: "List minted keys",
    summary: "See the keys this key minted and their children.",
    description:
      "Lists the keys this credential's key minted and everything under them (never the secrets): id, start, name, group, tools, read_only, parent, depth, dates, and `revoked_at` for a revoked one. Oldest first.",
  },
  {
    name: "key_revoke",
    access: "write",
    destructive: true,
    idempotent: true,
    title: "Revoke a minted key",
    summary: "Revoke keys this key minted, with every key under them.",
    description:
      "Revokes a key this credential's key minted (or one under it), by `id` from key_mint or key_list, with every key under it, at once everywhere: their next request answers invalid_token. A key outside this key's subtree is not_found.",
  },
] as const satisfies readonly ControlToolInfo[];

/** A key tool's name (`key_mint`, …). */
export type KeyToolName = (typeof KEY_TOOL_CATALOG)[number]["name"];

/**
 * The operation key management is admitted as by the limiter (REST and MCP alike): a read any
 * credential may make, not metered — a token from the calling key's bucket, no operation counted.
 */
export const KEY_MANAGEMENT_RATE_AS = "auth.whoami";
