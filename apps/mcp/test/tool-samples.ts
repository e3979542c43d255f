// Valid arguments for every action of every MCP tool of the catalog (@prim/mcp TOOLS, what the
// server registers), addressing one workspace's seeded objects (apps/api/test/route-samples.ts
// `seed`): so that a refusal is never a validation error masking what was tested, and the
// owner's own call with the same arguments succeeds. A tool or action added to the catalog
// without a line here fails `samplesOf`, and so the sweeps.
import type { ToolSpec } from "@prim/mcp";

/** A tool call's result as the SDK client answers it. */
export interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content?: unknown;
}

/** Calls tool `name` in one session. */
export type CallTool = (name: string, args: Record<string, unknown>) => Promise<ToolResult>;

/**
 * What an action's arguments name: the workspace's seeded job, memory and snapshot, fresh ones
 * an action's `prepare` made (a leased job, a memory to forget), and a number unique per call
 * (names of things a call creates).
 */
export interface Objects {
  job: string;
  memory: string;
  snapshot: string;
  lease: string;
  branch: string;
  /** A secret request (`vault_request_secret`) the owner made. */
  request: string;
  n: number;
}

export interface ActionSample {
  args: (o: Objects) => Record<string, unknown>;
  /** Makes what the action consumes, in the owner's session, on the primitive the action addresses. */
  prepare?: (owner: CallTool, primitive: string) => Promise<Partial<Objects>>;
  /** The error the owner's own call answers after getting past every lookup (none: it succeeds). */
  ownerGets?: string;
  /** Called without a `primitive` argument: the action reads the session's whole group (changes_read). */
  groupWide?: boolean;
}

/** A host the seeded secret's grant must allow (`.invalid` never resolves: RFC 2606). */
export const VAULT_HOST = "isolation.invalid";

const data = (result: ToolResult) => {
  if (result.isError) throw new Error(`prepare: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Record<string, any>;
};

/** A job of queue `q` received (leased) by the owner, ahead of the seeded one (priority). */
async function leasedJob(owner: CallTool, primitive: string): Promise<Partial<Objects>> {
  data(await owner("queue_send", { primitive, queue: "q", body: "to settle", priority: 1000 }));
  const job = data(await owner("queue_receive", { primitive, queue: "q", max: 1 })).data[0];
  return { job: job.id, lease: job.lease_token };
}

/** A pending secret request of the owner's (its id is in the URL of the refusal a client without elicitation gets). */
async function secretRequest(owner: CallTool, primitive: string): Promise<Partial<Objects>> {
  const refused = await owner("vault_request_secret", { primitive, name: "WANTED", reason: "For the sweep." });
  const message = String(refused.structuredContent?.error?.message ?? "");
  const request = /request "(sreq_[A-Za-z0-9_-]+)"/.exec(message)?.[1];
  if (request === undefined) throw new Error(`prepare: ${message}`);
  return { request };
}

async function deadJob(owner: CallTool, primitive: string): Promise<Partial<Objects>> {
  const { job, lease } = await leasedJob(owner, primitive);
  data(await owner("queue_ack", { primitive, action: "dead", queue: "q", job, lease_token: lease }));
  return { job };
}

async function freshMemory(owner: CallTool, primitive: string): Promise<Partial<Objects>> {
  return { memory: data(await owner("memory_remember", { primitive, kind: "fact", text: "to forget" })).id };
}

let branches = 0;
/** A branch of the owner's db (a promote or a delete consumes it). */
async function freshBranch(owner: CallTool, primitive: string): Promise<Partial<Objects>> {
  const branch = `spare-${++branches}`;
  data(await owner("db_branch", { primitive, action: "create", name: branch }));
  return { branch };
}

async function freshFile(owner: CallTool, primitive: string): Promise<Partial<Objects>> {
  data(await owner("fs_write", { primitive, path: "/spare.txt", content: "spare" }));
  return {};
}

const settle = (action: string, extra: Record<string, unknown> = {}): ActionSample => ({
  prepare: leasedJob,
  args: (o) => ({ action, queue: "q", job: o.job, lease_token: o.lease, ...extra }),
});

export const TOOL_SAMPLES: Record<string, Record<string, ActionSample>> = {
  primitive_list: { list: { args: () => ({}) } },
  primitive_create: { create: { args: (o) => ({ name: `made-${o.n}`, type: "kv" }) } },
  primitive_snapshot: {
    create: { args: (o) => ({ action: "create", name: `label-${o.n}` }) },
    list: { args: () => ({ action: "list" }) },
    restore: { args: (o) => ({ action: "restore", snapshot: o.snapshot }) },
  },
  primitive_fork: { fork: { args: (o) => ({ name: `fork-${o.n}`, snapshot: o.snapshot }) } },
  changes_read: {
    primitive: { args: () => ({ limit: 10 }) },
    group: { args: () => ({ limit: 10 }), groupWide: true },
  },
  db_query: {
    query: { args: () => ({ sql: "SELECT v FROM t" }) },
    tables: { args: () => ({ action: "tables" }) },
    table: { args: () => ({ action: "table", table: "t" }) },
  },
  db_exec: {
    exec: { args: () => ({ sql: "INSERT INTO t VALUES ('added')" }) },
    batch: { args: () => ({ statements: [{ sql: "SELECT count(*) FROM t" }] }) },
  },
  db_branch: {
    create: { args: (o) => ({ action: "create", name: `br-${o.n}` }) },
    list: { args: () => ({ action: "list" }) },
    promote: { prepare: freshBranch, args: (o) => ({ action: "promote", name: o.branch, force: true }) },
    delete: { prepare: freshBranch, args: (o) => ({ action: "delete", name: o.branch }) },
  },
  fs_read: { read: { args: () => ({ path: "/dir/file.txt" }) } },
  fs_write: {
    write: { args: (o) => ({ path: `/w-${o.n}.txt`, content: "written" }) },
    mkdir: { args: (o) => ({ action: "mkdir", path: `/made-${o.n}` }) },
    move: { prepare: freshFile, args: (o) => ({ action: "move", from: "/spare.txt", to: `/moved-${o.n}.txt` }) },
    delete: { prepare: freshFile, args: () => ({ action: "delete", path: "/spare.txt" }) },
  },
  fs_search: {
    search: { args: () => ({ q: "seeded" }) },
    glob: { args: () => ({ action: "glob", pattern: "**" }) },
  },
  fs_fork: { fork: { args: (o) => ({ from: "/dir", to: `/dir-${o.n}` }) } },
  queue_send: {
    send: { args: () => ({ queue: "q", body: 1 }) },
    publish: { args: () => ({ action: "publish", topic: "topic", body: 1 }) },
    send_batch: { args: () => ({ action: "send_batch", queue: "q", messages: [{ body: 1 }] }) },
    publish_batch: { args: () => ({ action: "publish_batch", topic: "topic", messages: [{ body: 1 }] }) },
  },
  queue_receive: {
    receive: { args: () => ({ queue: "q" }) },
    queues: { args: () => ({ action: "queues" }) },
    list: { args: () => ({ action: "list", queue: "q" }) },
    get: { args: (o) => ({ action: "get", queue: "q", job: o.job }) },
    subscribe: { args: (o) => ({ action: "subscribe", topic: "topic", queue: `q-${o.n}` }) },
    unsubscribe: { args: () => ({ action: "unsubscribe", topic: "topic", queue: "q" }) },
  },
  queue_ack: {
    ack: settle("ack"),
    retry: settle("retry"),
    fail: settle("fail", { error: "failed" }),
    dead: settle("dead"),
    heartbeat: settle("heartbeat", { extend: "30s" }),
    requeue: { prepare: deadJob, args: (o) => ({ action: "requeue", queue: "q", job: o.job }) },
    purge: { args: () => ({ action: "purge", queue: "q", status: "done" }) },
    ack_batch: {
      prepare: leasedJob,
      args: (o) => ({ action: "ack_batch", queue: "q", acks: [{ job: o.job, lease_token: o.lease }] }),
    },
  },
  memory_remember: { remember: { args: () => ({ kind: "fact", text: "remembered" }) } },
  memory_recall: {
    recall: { args: () => ({ query: "seeded" }) },
    list: { args: () => ({ action: "list" }) },
    get: { args: (o) => ({ action: "get", id: o.memory }) },
    history: { args: (o) => ({ action: "history", id: o.memory }) },
  },
  memory_forget: {
    forget: { prepare: freshMemory, args: (o) => ({ action: "forget", id: o.memory }) },
    supersede: { prepare: freshMemory, args: (o) => ({ action: "supersede", id: o.memory, text: "replaced" }) },
    consolidate: { args: () => ({ action: "consolidate" }) },
  },
  vault_list: {
    secrets: { args: () => ({}) },
    grants: { args: () => ({ action: "grants" }) },
  },
  vault_use: {
    fetch: {
      args: () => ({ url: `https://${VAULT_HOST}/`, auth: { bearer: "SECRET" } }),
      // The owner's call gets past the vault, the secret and its grant to the network, where the
      // name resolves nowhere (a missing secret is not_found, a host off the grant secret_policy_denied).
      ownerGets: "upstream_error",
    },
  },
  vault_request_secret: {
    // These sessions declare no URL elicitation: the owner's ask is made, then refused with its URL.
    ask: { args: (o) => ({ name: `ASKED_${o.n}`, reason: "For the sweep." }), ownerGets: "invalid_request" },
    // How an earlier request stands, without waiting.
    wait: { prepare: secretRequest, args: (o) => ({ request: o.request, wait: 0 }) },
  },
  kv_get: {
    get: { args: () => ({ key: "k" }) },
    mget: { args: () => ({ keys: ["k"] }) },
  },
  kv_list: { list: { args: () => ({ values: true }) } },
  kv_set: {
    set: { args: () => ({ key: "k2", value: 1 }) },
    mset: { args: () => ({ action: "mset", items: [{ key: "m", value: 1 }] }) },
    incr: { args: () => ({ action: "incr", key: "n" }) },
  },
  kv_delete: {
    delete: { args: () => ({ key: "k2" }) },
    mdelete: { args: () => ({ keys: ["m"] }) },
  },
  storage_list: { list: { args: () => ({}) } },
  storage_read: { read: { args: () => ({ key: "obj.txt" }) } },
  storage_write: {
    put: { args: () => ({ key: "new.txt", content: "put" }) },
    copy: { args: () => ({ action: "copy", from: "obj.txt", to: "copy.txt" }) },
    delete: { args: () => ({ action: "delete", key: "copy.txt" }) },
  },
  storage_sign: {
    presign: { args: () => ({ key: "obj.txt" }) },
    revoke: { args: () => ({ action: "revoke" }) },
  },
};

/**
 * Each action of `tool` with its sample; throws when one has none, or when the sample's
 * arguments would run another action than the one it stands for.
 */
export function samplesOf(tool: ToolSpec): [string, ActionSample][] {
  const names = Object.keys(tool.actions);
  return names.map((action) => {
    const sample = TOOL_SAMPLES[tool.name]?.[action];
    if (sample === undefined) throw new Error(`MCP tool ${tool.name}: no sample for action '${action}'`);
    const args = sample.args({
      job: "job",
      memory: "mem",
      snapshot: "snap",
      lease: "lease",
      branch: "br",
      request: "sreq",
      n: 0,
    });
    // The sweeps add the `primitive` argument of a tool that takes one, except to a group-wide action.
    const called = (tool.type !== undefined || tool.anyType) && !sample.groupWide ? { primitive: "p", ...args } : args;
    const runs = (args.action as string | undefined) ?? tool.pick?.(called) ?? names[0];
    if (runs !== action) throw new Error(`MCP tool ${tool.name}: the sample for '${action}' runs '${runs}'`);
    return [action, sample];
  });
}

/**
 * How a result refused: the error code of a tool error, or of every entry of a batch answered
 * entry by entry; "ok" when it did not.
 */
export function refusalOf(result: ToolResult): string {
  const out = result.structuredContent ?? {};
  if (result.isError) return String(out.error?.code);
  const entries = Array.isArray(out.data) ? (out.data as { error?: { code: string } }[]) : [];
  const codes = [...new Set(entries.map((e) => e.error?.code ?? "ok"))];
  return entries.length > 0 && codes.length === 1 && codes[0] !== "ok" ? (codes[0] as string) : "ok";
}
