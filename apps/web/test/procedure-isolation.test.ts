// Tenant isolation on the dashboard's tRPC router, generated from the router itself: every
// procedure whose input names an object by id (or a group by name) is called by each of A's
// roles allowed to call it, in A's own workspace, with workspace B's objects — all of them B's,
// and, next to A's own primitive, B's snapshot, job or group — and answers NOT_FOUND, with none
// of B's data; its positive control is B's member (the least role allowed) making the same call
// on the same freshly made object, which succeeds. Membership itself (another workspace in
// `workspace`) is procedures.test.ts's outsider rows.
//
// The rule: an input field in ID_FIELDS names an object of the workspace (primitive, group,
// job, snapshot, key, invitation, connection, member); every other field is a value or a name
// inside the primitive addressed (OTHER_FIELDS). A field in neither fails the test, so a new
// field is classified, and a procedure taking an id without a sample below fails it too.
import { Readable } from "node:stream";
import * as PrimDb from "@prim/db";
import { createKey, createUser, createWorkspace, inviteMember, Revocations, recordConnection } from "@prim/db";
import { startCells, type TestCells } from "@prim/testkit/cloud";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CellCalls, cellCalls } from "../src/server/cell";
import { type Role, userPrincipal } from "../src/server/trpc/init";
import { appRouter, PERMISSIONS } from "../src/server/trpc/router";
import { callerWith, testContext } from "./trpc-caller";
import { seedWebhook } from "./webhook-fixtures";

const ID_FIELDS = new Set(["primitive", "group", "id", "job", "snapshot", "user", "request", "delivery"]);
const OTHER_FIELDS = new Set([
  // The membership check's own field (procedures.test.ts: another workspace is NOT_FOUND).
  "workspace",
  // New values and filters.
  ...[
    "name",
    "email",
    "role",
    "tools",
    "enabled",
    "readOnly",
    "paused",
    "confirm",
    "type",
    "cursor",
    "action",
    "actor",
    "value",
    "expiresAt",
    "ipAllow",
    "budget",
    // A webhook endpoint's URL, filter and description.
    "url",
    "filter",
    "description",
  ],
  // Names inside the primitive addressed, and what to do there.
  ...["key", "path", "queue", "prefix", "sql", "view", "op", "args", "method"],
  // A bearer secret checked against the signed-in address, not an id (procedures.test.ts).
  "token",
]);
const MARK = "SEEDED-DATA";

/** One workspace's objects, as the samples address them. */
interface Objects {
  workspace: string;
  group: string;
  groupName: string;
  /** Another group of the workspace (a move's or a fork's destination). */
  other: string;
  otherName: string;
  kv: string;
  db: string;
  queue: string;
  storage: string;
  fs: string;
  snapshot: string;
  /** Fresh ones, made for one procedure by its `prepare`. */
  fresh?: string;
  freshName?: string;
  job?: string;
  /** A webhook endpoint of the group, with a delivery in its log. */
  webhook?: string;
  delivery?: string;
  /** A vault and a pending secret request in it. */
  vault?: string;
  request?: string;
}

interface Sample {
  input: (o: Objects) => Record<string, unknown>;
  /** Makes, in the workspace, what the procedure consumes. */
  prepare?: (w: Workspace) => Promise<Partial<Objects>>;
  /** The id is a filter over the caller's own records: another's matches nothing (an empty page). */
  filter?: true;
}

interface Workspace {
  objects: Objects;
  users: Record<"owner" | "admin" | "member", { id: string; email: string }>;
  invoke: <T>(op: string, target: string | null, input: unknown) => Promise<T>;
}

let cells: TestCells;
let pool: pg.Pool;
let invoker: RemoteInvoker;
let cellApi: CellCalls;
let revocations: Revocations;
const ws: Record<"a" | "b", Workspace> = {} as never;
let seq = 0;

async function freshKv(w: Workspace): Promise<Partial<Objects>> {
  const name = `fresh-${++seq}`;
  const made = await w.invoke<{ id: string }>("primitive.create", null, { name, type: "kv", group: w.objects.group });
  return { fresh: made.id, freshName: name };
}

/** A webhook endpoint of the workspace's group with a delivered delivery (as the owner makes it). */
async function freshWebhook(w: Workspace): Promise<Partial<Objects>> {
  const owner = userPrincipal(w.users.owner, w.objects.workspace, "owner");
  // At most 20 endpoints a workspace: the sweep's own go first.
  await pool.query("DELETE FROM webhook_endpoints WHERE workspace_id = $1", [w.objects.workspace]);
  const made = await seedWebhook(pool, cellApi, owner, w.objects.group);
  return { webhook: made.id, delivery: made.delivery };
}

/** A vault with a pending secret request (an agent's `vault_request_secret`). */
async function freshRequest(w: Workspace): Promise<Partial<Objects>> {
  const vault = await w.invoke<{ id: string }>("primitive.create", null, {
    name: `vault-${++seq}`,
    type: "vault",
    group: w.objects.group,
  });
  const made = await w.invoke<{ id: string }>("vault.request", vault.id, { name: "KEY", reason: "For the test." });
  return { vault: vault.id, request: made.id };
}

const SAMPLES: Record<string, Sample> = {
  "secretRequest.get": { prepare: freshRequest, input: (o) => ({ primitive: o.vault, request: o.request }) },
  "secretRequest.set": {
    prepare: freshRequest,
    input: (o) => ({ primitive: o.vault, request: o.request, value: "v4lue" }),
  },
  "secretRequest.decline": { prepare: freshRequest, input: (o) => ({ primitive: o.vault, request: o.request }) },
  "data.primitives": { input: (o) => ({ group: o.group }) },
  "data.createPrimitive": { input: (o) => ({ group: o.group, name: `p${++seq}`, type: "kv" }) },
  "data.deletePrimitive": { prepare: freshKv, input: (o) => ({ id: o.fresh, confirm: o.freshName }) },
  "data.kvList": { input: (o) => ({ primitive: o.kv }) },
  "primitive.get": { input: (o) => ({ primitive: o.kv }) },
  "primitive.pause": { prepare: freshKv, input: (o) => ({ primitive: o.fresh, paused: true }) },
  "primitive.update": { prepare: freshKv, input: (o) => ({ primitive: o.fresh, name: `u${++seq}`, group: o.other }) },
  "primitive.fork": { input: (o) => ({ primitive: o.kv, name: `f${++seq}`, group: o.other }) },
  "primitive.snapshots": { input: (o) => ({ primitive: o.kv }) },
  "primitive.snapshot": { input: (o) => ({ primitive: o.kv, name: `s${++seq}` }) },
  "primitive.restore": { input: (o) => ({ primitive: o.kv, snapshot: o.snapshot }) },
  "primitive.browse": {
    input: (o) => ({ primitive: o.queue, view: "queue.messages", args: { queue: "q" } }),
  },
  "primitive.act": { input: (o) => ({ primitive: o.kv, op: "kv.get", args: { key: "k" } }) },
  "primitive.preview": { input: (o) => ({ primitive: o.fs, path: "/file.txt" }) },
  "primitive.requeue": {
    prepare: async (w) => {
      const q = w.objects.queue;
      await w.invoke("queue.send", q, { queue: "q", body: "dead", priority: 1000 });
      const [job] = (
        await w.invoke<{ data: { id: string; lease_token: string }[] }>("queue.receive", q, { queue: "q" })
      ).data as [{ id: string; lease_token: string }];
      await w.invoke("queue.ack", q, { queue: "q", job: job.id, lease_token: job.lease_token, action: "dead" });
      return { job: job.id };
    },
    input: (o) => ({ primitive: o.queue, queue: "q", job: o.job }),
  },
  "primitive.sign": { input: (o) => ({ primitive: o.storage, key: "obj.txt", method: "GET" }) },
  "primitive.dbQuery": { input: (o) => ({ primitive: o.db, sql: "SELECT v FROM t" }) },
  "keys.create": { input: (o) => ({ group: o.group, name: "made" }) },
  "keys.revoke": {
    prepare: async (w) => ({ fresh: (await createKey(pool, { workspace: w.objects.workspace })).id }),
    input: (o) => ({ id: o.fresh }),
  },
  "members.remove": {
    prepare: async (w) => {
      const email = `extra${++seq}@members.test`;
      return { fresh: (await createUser(pool, { email, password: "password123", workspace: w.objects.workspace })).id };
    },
    input: (o) => ({ user: o.fresh }),
  },
  "members.setRole": {
    prepare: async (w) => {
      const email = `role${++seq}@members.test`;
      return { fresh: (await createUser(pool, { email, password: "password123", workspace: w.objects.workspace })).id };
    },
    input: (o) => ({ user: o.fresh, role: "member" }),
  },
  "members.revokeInvitation": {
    prepare: async (w) => ({
      fresh: (
        await inviteMember(pool, {
          workspace: w.objects.workspace,
          email: `inv${++seq}@members.test`,
          role: "member",
          invitedBy: "test",
        })
      ).id,
    }),
    input: (o) => ({ id: o.fresh }),
  },
  "connections.disconnect": {
    prepare: async (w) => ({
      fresh: await recordConnection(pool, {
        grantId: `grant_${++seq}`,
        clientId: "client",
        clientName: "Agent",
        user: w.users.member.id,
        workspace: w.objects.workspace,
        groupId: w.objects.group,
        tools: ["*"],
      }),
    }),
    input: (o) => ({ id: o.fresh }),
  },
  "audit.list": { filter: true, input: (o) => ({ group: o.group }) },
  "webhooks.create": { input: (o) => ({ group: o.group, url: "https://hooks.invalid/isolation" }) },
  "webhooks.delete": { prepare: freshWebhook, input: (o) => ({ id: o.webhook }) },
  "webhooks.enable": { prepare: freshWebhook, input: (o) => ({ id: o.webhook }) },
  "webhooks.deliveries": { prepare: freshWebhook, input: (o) => ({ id: o.webhook }) },
  "webhooks.redeliver": { prepare: freshWebhook, input: (o) => ({ id: o.webhook, delivery: o.delivery }) },
};

type Procedures = Record<string, { _def: { inputs: { shape?: Record<string, unknown> }[] } }>;
const PROCEDURES = appRouter._def.procedures as unknown as Procedures;
const fieldsOf = (path: string) => (PROCEDURES[path]?._def.inputs ?? []).flatMap((s) => Object.keys(s.shape ?? {}));
/** The procedures taking an object id, from their input schemas. */
const ID_TAKING = Object.keys(PROCEDURES).filter((p) => fieldsOf(p).some((f) => ID_FIELDS.has(f)));

function callerAs(user: { id: string; email: string }) {
  const context = testContext({
    pool,
    publish: (message) => revocations.publish(message),
    invoker,
    cell: cellApi,
    apiUrl: cells.cells[0]?.url as string,
    operations: (workspace, month) => revocations.operations(workspace, month),
  });
  return callerWith(context, user);
}

/** Calls procedure `path` (e.g. "primitive.get") as `user`. */
function callAs(user: { id: string; email: string }, path: string, input: Record<string, unknown>): Promise<unknown> {
  let fn: any = callerAs(user);
  for (const part of path.split(".")) fn = fn[part];
  return fn(input);
}

async function seedWorkspace(name: "a" | "b"): Promise<Workspace> {
  const users = {} as Workspace["users"];
  for (const role of ["owner", "admin", "member"] as const) {
    const email = `${role}@${name}.test`;
    users[role] = { id: (await createUser(pool, { email, password: "password123" })).id, email };
  }
  // Limits are on; an Enterprise rate no sweep reaches (the sweep is not about rates).
  const { workspace } = await createWorkspace(pool, {
    name,
    ownerId: users.owner.id,
    key: false,
    plan: "enterprise",
    rps: 100_000,
    burst: 100_000,
  });
  for (const role of ["admin", "member"] as const) {
    await pool.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, $3)", [
      workspace.id,
      users[role].id,
      role,
    ]);
  }
  const owner = userPrincipal(users.owner, workspace.id, "owner");
  const invoke = <T>(op: string, target: string | null, input: unknown) => invoker.invoke<T>(owner, op, target, input);
  const groupName = `${name}-app`;
  const group = (await invoke<{ id: string }>("group.create", null, { name: groupName })).id;
  const otherName = `${name}-other`;
  const other = (await invoke<{ id: string }>("group.create", null, { name: otherName })).id;
  const ids: Record<string, string> = {};
  for (const type of ["kv", "db", "queue", "storage", "fs"]) {
    ids[type] = (await invoke<{ id: string }>("primitive.create", null, { name: `${name}-${type}`, type, group })).id;
  }
  const mark = `${MARK} ${name}`;
  await invoke("kv.set", ids.kv, { key: "k", value: mark });
  await invoke("db.batch", ids.db, {
    statements: [{ sql: "CREATE TABLE t (v TEXT)" }, { sql: "INSERT INTO t VALUES (?)", params: [mark] }],
  });
  await invoke("queue.send", ids.queue, { queue: "q", body: mark });
  const bytes = Buffer.from(mark);
  await invoke("storage.put", ids.storage, {
    key: "obj.txt",
    body: Readable.from([bytes]),
    content_length: bytes.length,
  });
  await invoke("fs.write", ids.fs, { path: "/file.txt", body: Readable.from([bytes]), content_length: bytes.length });
  const snapshot = (await invoke<{ id: string }>("primitive.snapshot", ids.kv, {})).id;
  const objects = { workspace: workspace.id, group, groupName, other, otherName, snapshot, ...ids } as Objects;
  return { objects, users, invoke };
}

beforeAll(async () => {
  // One cell; the dashboard reaches it through its internal invoke, as in production.
  cells = await startCells("webisolation", ["cell-a"]);
  const cell = cells.cells[0] as TestCells["cells"][number];
  pool = cell.api.hub.pool as pg.Pool;
  invoker = new RemoteInvoker({ url: cell.internalUrl, secret: cells.env.PRIM_INTERNAL_SECRET as string });
  cellApi = cellCalls({ url: cell.internalUrl, secret: cells.env.PRIM_INTERNAL_SECRET as string });
  revocations = new Revocations("redis://127.0.0.1:6379");
  ws.a = await seedWorkspace("a");
  ws.b = await seedWorkspace("b");
}, 60_000);

afterAll(async () => {
  await revocations?.close();
  await cells?.stop();
});

describe("another workspace's ids, on every procedure that takes one", () => {
  it("classifies every input field, and has a sample for each procedure taking an id", () => {
    const unclassified = Object.keys(PROCEDURES).flatMap((p) =>
      fieldsOf(p)
        .filter((f) => !ID_FIELDS.has(f) && !OTHER_FIELDS.has(f))
        .map((f) => `${p}: ${f}`),
    );
    expect(unclassified).toEqual([]);
    expect(ID_TAKING.sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  it("tells each workspace's member only its own groups and counts (Connect, Overview)", async () => {
    for (const [mine, theirs] of [
      [ws.a, ws.b],
      [ws.b, ws.a],
    ] as const) {
      const as = callerAs(mine.users.member);
      const connect = await as.workspace.connect({ workspace: mine.objects.workspace });
      expect(connect.groups.sort()).toEqual([mine.objects.groupName, mine.objects.otherName].sort());
      const overview = await as.workspace.overview({ workspace: mine.objects.workspace });
      expect(overview).toMatchObject({
        groups: 2,
        primitives: await PrimDb.countPrimitives(pool, mine.objects.workspace),
      });
      await expect(as.workspace.connect({ workspace: theirs.objects.workspace })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      await expect(as.workspace.overview({ workspace: theirs.objects.workspace })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    }
  });

  it("answers NOT_FOUND and nothing of B to each of A's roles; B's member succeeds on the same object", async () => {
    const wrong: string[] = [];
    let calls = 0;
    for (const path of ID_TAKING) {
      const sample = SAMPLES[path] as Sample;
      const allowed = PERMISSIONS[path as keyof typeof PERMISSIONS] as readonly Role[];
      const roles = (["member", "admin", "owner"] as const).filter((r) => allowed.includes(r));
      const least = roles[0];
      if (least === undefined) throw new Error(`${path}: no data role may call it`);
      const objectsOf = async (w: Workspace) => ({ ...w.objects, ...(await sample.prepare?.(w)) });
      const [a, b] = [await objectsOf(ws.a), await objectsOf(ws.b)];
      const idFields = fieldsOf(path).filter((f) => ID_FIELDS.has(f));
      // All of B's (a group by id and by name); then A's own primitive with each other id of B's.
      const variants = idFields.includes("group") ? [b, { ...b, group: b.groupName, other: b.otherName }] : [b];
      const inputs: Record<string, unknown>[] = [];
      for (const theirs of variants) {
        inputs.push(sample.input(theirs));
        if (!idFields.includes("primitive")) continue;
        for (const field of idFields.filter((f) => f !== "primitive")) {
          inputs.push({ ...sample.input(a), [field]: sample.input(theirs)[field] });
        }
      }
      for (const input of inputs) {
        for (const role of roles) {
          calls++;
          const outcome = await callAs(ws.a.users[role], path, { ...input, workspace: a.workspace }).then(
            (out) =>
              sample.filter && (out as { data: unknown[] }).data.length === 0 ? "FILTERED" : JSON.stringify(out),
            (err: { code: string; message: string }) => (err.message.includes(MARK) ? err.message : err.code),
          );
          if (outcome !== (sample.filter ? "FILTERED" : "NOT_FOUND")) {
            wrong.push(`${path} as A's ${role} with ${JSON.stringify(input)} → ${outcome.slice(0, 200)}`);
          }
        }
      }
      // Positive control: B's least role allowed, B's workspace, the same object.
      const own = await callAs(ws.b.users[least], path, { ...sample.input(b), workspace: b.workspace }).catch(
        (err: { code: string; message: string }) => {
          throw new Error(`${path} by B's ${least} on B's own object: ${err.code} ${err.message}`);
        },
      );
      if (sample.filter) expect((own as { data: unknown[] }).data.length, path).toBeGreaterThan(0);
    }
    expect(wrong).toEqual([]);
    console.log(`tRPC isolation: ${ID_TAKING.length} procedures, ${calls} calls by A`);
  }, 60_000);
});
