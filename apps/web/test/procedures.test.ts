// The dashboard's tRPC procedures against a real Postgres database (and the machine's Redis for
// revocations): permissions table-driven from PERMISSIONS — every workspace procedure called by
// an outsider (NOT_FOUND), and by each role (allowed, or FORBIDDEN) — then what the procedures
// do: keys shown once and revoked, members removed with their OAuth connections, the last owner
// kept.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import * as PrimDb from "@prim/db";
import { createUser, createWorkspace, Revocations } from "@prim/db";
import { createMailer, type MailCapture, type Mailer, startMailCapture } from "@prim/mail";
import { startCloud, type TestCloud } from "@prim/testkit/cloud";
import { keyStart } from "@prim/wire";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CellCalls, cellCalls } from "../src/server/cell";
import { type Role, userPrincipal } from "../src/server/trpc/init";
import { appRouter, PERMISSIONS } from "../src/server/trpc/router";
import { callerWith, testContext } from "./trpc-caller";
import { seedWebhook } from "./webhook-fixtures";

const SECRET = randomBytes(24).toString("hex");
let cloud: TestCloud;
let invoker: RemoteInvoker;
let cell: CellCalls;
let kvId: string;
let dbId: string;
let queueId: string;
let storageId: string;
let fsId: string;
let vaultId: string | undefined;
/** Group `app`'s id (connections name it). */
let appGroupId: string;
let pool: pg.Pool;
let revocations: Revocations;
/** The invitation mail goes through SMTP into this capture. */
let capture: MailCapture;
let mailer: Mailer;
const mail = (message: Parameters<Mailer["send"]>[0]) => mailer.send(message);
const users: Record<Role | "outsider", { id: string; email: string }> = {} as never;
let workspace: string;
const published: string[] = [];
function callerFor(who: Role | "outsider" | null) {
  const context = testContext({
    pool,
    publish: async (message) => {
      published.push(message);
      await revocations.publish(message);
    },
    invoker,
    cell,
    mail,
    apiUrl: cloud.url,
    operations: (ws, month) => revocations.operations(ws, month),
    // billing: Stripe is apps/api's billing test and the e2e's (with the stand-in)
  });
  return callerWith(context, who === null ? null : users[who]);
}

let seq = 0;
/** A new user with `role` in the workspace (a target to remove). */
async function extraMember(role: Role = "member"): Promise<string> {
  seq++;
  return (await createUser(pool, { email: `extra${seq}@acme.test`, password: "password123", workspace, role })).id;
}

/** A fresh workspace named Doomed with the four roles of Acme (and a group with data in the cell). */
async function doomedWorkspace(): Promise<string> {
  const id = (await createWorkspace(pool, { name: "Doomed", ownerId: users.owner.id, key: false })).workspace.id;
  for (const role of ["admin", "member", "billing"] as const) {
    await pool.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, $3)", [
      id,
      users[role].id,
      role,
    ]);
  }
  const owner = userPrincipal(users.owner, id, "owner");
  await invoker.invoke(owner, "group.create", null, { name: "doomed" });
  await invoker.invoke(owner, "primitive.create", null, { name: "k", type: "kv", group: "doomed" });
  return id;
}

beforeAll(async () => {
  cloud = await startCloud("webprocs", { PRIM_INTERNAL_SECRET: SECRET });
  pool = cloud.api.hub.pool as pg.Pool;
  invoker = new RemoteInvoker({
    url: cloud.internalUrl,
    secret: SECRET,
  });
  cell = cellCalls({ url: cloud.internalUrl, secret: SECRET });
  revocations = new Revocations("redis://127.0.0.1:6379");
  capture = await startMailCapture();
  mailer = createMailer({ url: capture.smtpUrl, from: "Prim <no-reply@localhost>" });
  for (const who of ["owner", "admin", "member", "billing", "outsider"] as const) {
    const email = `${who}@acme.test`;
    users[who] = { id: (await createUser(pool, { email, password: "password123" })).id, email };
  }
  workspace = (await createWorkspace(pool, { name: "Acme", ownerId: users.owner.id, key: false, plan: "pro" }))
    .workspace.id;
  for (const role of ["admin", "member", "billing"] as const) {
    await pool.query("INSERT INTO members (workspace_id, user_id, role) VALUES ($1, $2, $3)", [
      workspace,
      users[role].id,
      role,
    ]);
  }
  const owner = userPrincipal(users.owner, workspace, "owner");
  appGroupId = (await invoker.invoke<{ id: string }>(owner, "group.create", null, { name: "app" })).id;
  kvId = (
    await invoker.invoke<{ id: string }>(owner, "primitive.create", null, { name: "cache", type: "kv", group: "app" })
  ).id;
  await invoker.invoke(owner, "kv.set", kvId, { key: "greeting", value: "hello" });
  dbId = (
    await invoker.invoke<{ id: string }>(owner, "primitive.create", null, { name: "main", type: "db", group: "app" })
  ).id;
  queueId = (
    await invoker.invoke<{ id: string }>(owner, "primitive.create", null, { name: "jobs", type: "queue", group: "app" })
  ).id;
  storageId = (
    await invoker.invoke<{ id: string }>(owner, "primitive.create", null, {
      name: "files",
      type: "storage",
      group: "app",
    })
  ).id;
  fsId = (
    await invoker.invoke<{ id: string }>(owner, "primitive.create", null, { name: "docs", type: "fs", group: "app" })
  ).id;
  const write = (path: string, bytes: Buffer) =>
    invoker.invoke(owner, "fs.write", fsId, { path, body: Readable.from([bytes]), content_length: bytes.length });
  await write("/notes/readme.md", Buffer.from("# Hello\nünïcode ok\n"));
  await write("/bin/blob", Buffer.from([0, 1, 2, 255, 254]));
  await write("/img/dot.png", Buffer.from("89504e470d0a1a0a", "hex"));
  await write("/big.txt", Buffer.alloc(300 * 1024, "a"));
  await invoker.invoke(owner, "db.batch", dbId, {
    statements: [{ sql: "CREATE TABLE t (n INTEGER)" }, { sql: "INSERT INTO t VALUES (7)" }],
  });
}, 60_000);

afterAll(async () => {
  mailer?.close();
  await capture?.close();
  await revocations?.close();
  await cloud?.stop();
});

type Caller = ReturnType<typeof callerFor>;

/** A fresh endpoint of group `app` with a delivered delivery (each role's call gets its own). */
async function webhook() {
  await pool.query("DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND url LIKE 'https://hooks.invalid/%'", [
    workspace,
  ]);
  // As an agent's workspace key: its own rate bucket (the samples run for every role).
  const agent = { kind: "account", workspace, actor: "key:procedures-hooks", groupId: null, tools: null } as const;
  return seedWebhook(pool, cell, agent, "app");
}

/**
 * A fresh secret request in a vault of group `app`, asked by an agent's key (its own rate
 * bucket: the samples run for every role, and the owner's calls have theirs).
 */
async function secretRequest(): Promise<{ primitive: string; request: string }> {
  const agent = { kind: "account", workspace, actor: "key:procedures-agent", groupId: null, tools: null } as const;
  vaultId ??= (
    await invoker.invoke<{ id: string }>(agent, "primitive.create", null, { name: "keys", type: "vault", group: "app" })
  ).id;
  const made = await invoker.invoke<{ id: string }>(agent, "vault.request", vaultId, {
    name: `KEY_${++seq}`,
    reason: "For the test.",
  });
  return { primitive: vaultId, request: made.id };
}

/** One call of each workspace procedure, with what it needs made fresh for it. */
const SAMPLES: Record<keyof typeof PERMISSIONS, (c: Caller) => Promise<unknown>> = {
  "workspace.rename": (c) => c.workspace.rename({ workspace, name: "Acme" }),
  // A workspace of its own to delete, where each user has the same role as in Acme.
  "workspace.delete": async (c) => c.workspace.delete({ workspace: await doomedWorkspace(), name: "Doomed" }),
  "workspace.connect": (c) => c.workspace.connect({ workspace }),
  "workspace.overview": (c) => c.workspace.overview({ workspace }),
  "members.list": (c) => c.members.list({ workspace }),
  "members.remove": async (c) => c.members.remove({ workspace, user: await extraMember() }),
  "members.setRole": async (c) => c.members.setRole({ workspace, user: await extraMember(), role: "billing" }),
  "members.leave": (c) => c.members.leave({ workspace }),
  "members.invite": (c) => c.members.invite({ workspace, email: `invitee${++seq}@acme.test`, role: "member" }),
  "members.invitations": (c) => c.members.invitations({ workspace }),
  "members.revokeInvitation": async (c) => {
    const made = await PrimDb.inviteMember(pool, {
      workspace,
      email: `w${++seq}@acme.test`,
      role: "member",
      invitedBy: "test",
    });
    return c.members.revokeInvitation({ workspace, id: made.id });
  },
  "keys.list": (c) => c.keys.list({ workspace }),
  "keys.create": (c) => c.keys.create({ workspace, group: "app", tools: ["kv_get"], name: "ci" }),
  "keys.revoke": async (c) => {
    const key = await PrimDb.createKey(pool, { workspace, name: "to revoke" });
    return c.keys.revoke({ workspace, id: key.id });
  },
  "connections.list": (c) => c.connections.list({ workspace }),
  "connections.disconnect": async (c) => {
    const id = await PrimDb.recordConnection(pool, {
      grantId: `grant_procedures_${++seq}`,
      clientId: "https://agent.test/client.json",
      clientName: "Agent",
      user: users.owner.id,
      workspace,
      groupId: appGroupId,
      tools: ["kv_get"],
    });
    return c.connections.disconnect({ workspace, id });
  },
  "data.groups": (c) => c.data.groups({ workspace }),
  "data.createGroup": (c) => c.data.createGroup({ workspace, name: `g${++seq}` }),
  "data.primitives": (c) => c.data.primitives({ workspace, group: "app" }),
  "data.createPrimitive": (c) => c.data.createPrimitive({ workspace, group: "app", name: `p${++seq}`, type: "kv" }),
  "data.deletePrimitive": async (c) => {
    const made = await invoker.invoke<{ id: string; name: string }>(
      userPrincipal(users.owner, workspace, "owner"),
      "primitive.create",
      null,
      { name: `d${++seq}`, type: "kv", group: "app" },
    );
    return c.data.deletePrimitive({ workspace, id: made.id, confirm: made.name });
  },
  "data.kvList": (c) => c.data.kvList({ workspace, primitive: kvId }),
  "primitive.get": (c) => c.primitive.get({ workspace, primitive: kvId }),
  "primitive.pause": async (c) => {
    const made = await invoker.invoke<{ id: string }>(
      userPrincipal(users.owner, workspace, "owner"),
      "primitive.create",
      null,
      {
        name: `z${++seq}`,
        type: "kv",
        group: "app",
      },
    );
    return c.primitive.pause({ workspace, primitive: made.id, paused: true });
  },
  "primitive.update": async (c) => {
    const made = await invoker.invoke<{ id: string }>(
      userPrincipal(users.owner, workspace, "owner"),
      "primitive.create",
      null,
      {
        name: `u${++seq}`,
        type: "kv",
        group: "app",
      },
    );
    return c.primitive.update({ workspace, primitive: made.id, name: `renamed${seq}` });
  },
  "primitive.fork": (c) => c.primitive.fork({ workspace, primitive: kvId, name: `fork${++seq}` }),
  "primitive.snapshots": (c) => c.primitive.snapshots({ workspace, primitive: kvId }),
  "primitive.snapshot": (c) => c.primitive.snapshot({ workspace, primitive: kvId }),
  "primitive.restore": async (c) => {
    const snap = await invoker.invoke<{ id: string }>(
      userPrincipal(users.owner, workspace, "owner"),
      "primitive.snapshot",
      kvId,
      {},
    );
    return c.primitive.restore({ workspace, primitive: kvId, snapshot: snap.id });
  },
  "primitive.dbQuery": (c) => c.primitive.dbQuery({ workspace, primitive: dbId, sql: "SELECT n FROM t" }),
  "primitive.browse": (c) => c.primitive.browse({ workspace, primitive: queueId, view: "queue.queues" }),
  "primitive.act": (c) => c.primitive.act({ workspace, primitive: kvId, op: "kv.set", args: { key: "k", value: 1 } }),
  "webhooks.list": (c) => c.webhooks.list({ workspace }),
  "webhooks.create": (c) => c.webhooks.create({ workspace, group: "app", url: "https://hooks.invalid/procedures" }),
  "webhooks.delete": async (c) => c.webhooks.delete({ workspace, id: (await webhook()).id }),
  "webhooks.enable": async (c) => c.webhooks.enable({ workspace, id: (await webhook()).id }),
  "webhooks.deliveries": async (c) => c.webhooks.deliveries({ workspace, id: (await webhook()).id }),
  "webhooks.redeliver": async (c) => c.webhooks.redeliver({ workspace, ...(await webhook()) }),
  "billing.summary": (c) => c.billing.summary({ workspace }),
  "billing.checkout": (c) => c.billing.checkout({ workspace }),
  "billing.portal": (c) => c.billing.portal({ workspace }),
  "primitive.preview": (c) => c.primitive.preview({ workspace, primitive: fsId, path: "/notes/readme.md" }),
  "primitive.requeue": async (c) => {
    // A dead job (one received, then settled as dead): the only kind a requeue takes.
    const owner = userPrincipal(users.owner, workspace, "owner");
    const queue = "work";
    await invoker.invoke(owner, "queue.send", queueId, { queue, body: { n: ++seq } });
    const received = await invoker.invoke<{ data: { id: string; lease_token: string }[] }>(
      owner,
      "queue.receive",
      queueId,
      { queue },
    );
    const job = received.data[0] as { id: string; lease_token: string };
    await invoker.invoke(owner, "queue.ack", queueId, {
      queue,
      job: job.id,
      lease_token: job.lease_token,
      action: "dead",
    });
    return c.primitive.requeue({ workspace, primitive: queueId, queue, job: job.id });
  },
  "primitive.sign": (c) => c.primitive.sign({ workspace, primitive: storageId, key: "a.txt", method: "PUT" }),
  "secretRequest.get": async (c) => c.secretRequest.get({ workspace, ...(await secretRequest()) }),
  "secretRequest.set": async (c) => c.secretRequest.set({ workspace, ...(await secretRequest()), value: "v4lue" }),
  "secretRequest.decline": async (c) => c.secretRequest.decline({ workspace, ...(await secretRequest()) }),
  "usage.summary": (c) => c.usage.summary({ workspace }),
  "audit.list": (c) => c.audit.list({ workspace, action: "primitive." }),
  "settings.secretExport": (c) => c.settings.secretExport({ workspace }),
  "settings.setSecretExport": (c) => c.settings.setSecretExport({ workspace, enabled: false }),
};

/**
 * What an allowed caller gets from its sample: success, but for Stripe's two procedures, which
 * without Stripe configured answer PRECONDITION_FAILED past the role check (Stripe itself is
 * apps/api's billing test and the e2e's, with the stand-in).
 */
const ALLOWED_ANSWER: Partial<Record<keyof typeof PERMISSIONS, string>> = {
  "billing.checkout": "PRECONDITION_FAILED",
  "billing.portal": "PRECONDITION_FAILED",
};

describe("permissions (table-driven)", () => {
  it("lists every workspace procedure of the router", () => {
    // Not workspace procedures: the caller's own list, creating one, accepting an invitation.
    const own = new Set(["workspace.list", "workspace.create", "invitation.accept"]);
    const procedures = Object.keys(appRouter._def.procedures).filter((p) => !own.has(p));
    expect(procedures.sort()).toEqual(Object.keys(PERMISSIONS).sort());
  });

  for (const [procedure, allowed] of Object.entries(PERMISSIONS) as [keyof typeof PERMISSIONS, readonly Role[]][]) {
    it(`${procedure}: ${allowed.join(", ")} only`, async () => {
      await expect(SAMPLES[procedure](callerFor(null))).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      await expect(SAMPLES[procedure](callerFor("outsider"))).rejects.toMatchObject({
        code: "NOT_FOUND",
        message: expect.stringContaining("workspace"),
      });
      for (const role of ["owner", "admin", "member", "billing"] as const) {
        // Leaving is tried by a stand-in of each role (the real ones stay for the other rows).
        const caller = procedure === "members.leave" ? await standIn(role) : callerFor(role);
        const outcome = await SAMPLES[procedure](caller).then(
          () => ({ code: "ok", message: "" }),
          (err: { code: string; message: string }) => err,
        );
        const want = allowed.includes(role) ? (ALLOWED_ANSWER[procedure] ?? "ok") : "FORBIDDEN";
        expect(outcome.code, `${procedure} as ${role}: ${outcome.message}`).toBe(want);
      }
    });
  }
});

/** A caller who is a fresh member with `role` (leaving takes the caller out). */
async function standIn(role: Role): Promise<Caller> {
  const id = await extraMember(role);
  const email = (await pool.query<{ email: string }>("SELECT email FROM users WHERE id = $1", [id])).rows[0]?.email;
  const context = testContext({
    pool,
    publish: async (m) => {
      published.push(m);
    },
    invoker,
    mail,
    apiUrl: cloud.url,
  });
  return callerWith(context, { id, email: email as string });
}

describe("what the procedures do", () => {
  it("reaches data through the engine as the user: listed, created, browsed, deleted after a typed confirmation, audited", async () => {
    const member = callerFor("member");
    const page = await member.data.primitives({ workspace, group: "app" });
    expect(page.data.map((p) => p.name)).toContain("cache");
    const kv = await member.data.kvList({ workspace, primitive: kvId, prefix: "gre" });
    expect(kv.data).toEqual([expect.objectContaining({ key: "greeting", value: "hello" })]);
    const made = await member.data.createPrimitive({ workspace, group: "app", name: "scratch", type: "kv" });
    // A member is not account-level: the engine refuses it a group (and a delete is admins' here).
    await expect(member.data.createGroup({ workspace, name: "nope" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(
      callerFor("admin").data.deletePrimitive({ workspace, id: made.id, confirm: "scrach" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("scratch") });
    await callerFor("admin").data.deletePrimitive({ workspace, id: made.id, confirm: "scratch" });
    const audit = await invoker.invoke<{ data: { action: string; actor: string }[] }>(
      userPrincipal(users.owner, workspace, "owner"),
      "audit.list",
      null,
      { action: "primitive." },
    );
    expect(audit.data).toContainEqual(
      expect.objectContaining({ action: "primitive.create", actor: `user:${users.member.id}` }),
    );
    expect(audit.data).toContainEqual(
      expect.objectContaining({ action: "primitive.delete", actor: `user:${users.admin.id}` }),
    );
    // Input errors name the field (the same zod schema the form uses).
    const bad = await member.data
      .createPrimitive({ workspace, group: "app", name: "Bad Name", type: "kv" })
      .catch((err: { code: string; cause: { issues: { path: string[] }[] } }) => err);
    expect(bad).toMatchObject({ code: "BAD_REQUEST" });
    expect((bad as { cause: { issues: { path: string[] }[] } }).cause.issues[0]?.path).toEqual(["name"]);
  });

  it("creates a workspace owned by the caller, with no key made behind their back", async () => {
    const created = await callerFor("outsider").workspace.create({ name: "Outsider's" });
    const list = await callerFor("outsider").workspace.list();
    expect(list).toContainEqual({ id: created.id, name: "Outsider's", plan: "starter", role: "owner" });
    expect(await callerFor("outsider").keys.list({ workspace: created.id })).toEqual([]);
    await expect(callerFor("outsider").workspace.create({ name: "  " })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("shows a key once, lists it by its start with its creator, and revokes it (published)", async () => {
    const made = await callerFor("admin").keys.create({ workspace, group: "app", tools: ["kv_*"], name: "deploy" });
    expect(made.key).toMatch(/^pk_/);
    const listed = (await callerFor("member").keys.list({ workspace })).find((k) => k.id === made.id);
    expect(listed).toMatchObject({
      start: keyStart(made.key),
      name: "deploy",
      group: "app",
      tools: ["kv_*"],
      read_only: false,
    });
    // The form's Read-only switch: the key's principal is read-only (engine.invoke refuses its writes).
    const reader = await callerFor("admin").keys.create({ workspace, name: "agent", readOnly: true });
    expect(reader).toMatchObject({ group: null, tools: null, read_only: true });
    expect((await callerFor("member").keys.list({ workspace })).find((k) => k.id === reader.id)?.read_only).toBe(true);
    const resolved = await new PrimDb.ApiKeyResolver(pool).resolve(reader.key);
    expect(resolved).toMatchObject({ kind: "account", readOnly: true, actor: `key:${reader.id}` });
    expect((await new PrimDb.ApiKeyResolver(pool).resolve(made.key)).readOnly).toBeUndefined();
    await callerFor("owner").keys.revoke({ workspace, id: reader.id });
    expect(listed?.created_by).toBe(`user:${users.admin.id}`);
    // The creator by name (the user's email, resolved in the same query), for the keys page.
    expect(listed?.created_by_email).toBe(users.admin.email);
    expect(JSON.stringify(listed)).not.toContain(made.key);
    await callerFor("owner").keys.revoke({ workspace, id: made.id });
    expect(published).toContain(PrimDb.hashKey(made.key));
    // Another workspace's key is not found from here.
    const other = await createWorkspace(pool, { name: "Other" });
    await expect(callerFor("owner").keys.revoke({ workspace, id: other.key_id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("creates a key for agents with an expiry, an IP allowlist and a budget, and lists them", async () => {
    const expiresAt = Date.now() + 3_600_000;
    const made = await callerFor("admin").keys.create({
      workspace,
      name: "sub-agent",
      expiresAt,
      ipAllow: ["10.0.0.0/8", "::1/128"],
      budget: { per: "day", limit: 1000 },
    });
    expect(made).toMatchObject({ expires_at: expiresAt, ip_allow: ["10.0.0.0/8", "::1/128"] });
    const listed = (await callerFor("member").keys.list({ workspace })).find((k) => k.id === made.id);
    expect(listed?.expires_at?.getTime()).toBe(expiresAt);
    expect(listed).toMatchObject({ ip_allow: ["10.0.0.0/8", "::1/128"], budget: { per: "day", limit: 1000 } });
    // The principal carries the budget and answers only inside the allowlist.
    const resolver = new PrimDb.ApiKeyResolver(pool);
    expect((await resolver.resolve(made.key, { clientIp: "::1" })).budget).toEqual({ per: "day", limit: 1000 });
    await expect(resolver.resolve(made.key, { clientIp: "192.0.2.1" })).rejects.toMatchObject({ code: "forbidden" });
    // Bad limits are refused, nothing made; a member cannot make keys at all.
    await expect(callerFor("admin").keys.create({ workspace, ipAllow: ["10.0.0.0/99"] })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(callerFor("admin").keys.create({ workspace, expiresAt: Date.now() - 1000 })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(callerFor("member").keys.create({ workspace, budget: { total: 5 } })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await callerFor("owner").keys.revoke({ workspace, id: made.id });
  });

  it("tells how to connect (this deployment's REST and MCP URLs, the groups) and counts the workspace", async () => {
    const connect = await callerFor("member").workspace.connect({ workspace });
    const groups = (await PrimDb.listGroups(pool, workspace)).map((g) => g.name);
    expect(groups).toContain("app");
    expect(connect).toEqual({ apiUrl: cloud.url, mcpUrl: "https://mcp.prim.test/mcp", groups });
    const before = await callerFor("member").workspace.overview({ workspace });
    const made = await callerFor("admin").keys.create({ workspace, group: "app", name: "overview" });
    await callerFor("owner").data.createPrimitive({ workspace, group: "app", name: `ov${++seq}`, type: "kv" });
    const after = await callerFor("member").workspace.overview({ workspace });
    expect(after).toMatchObject({ groups: groups.length, plan: "pro", month: new Date().toISOString().slice(0, 7) });
    expect(after.keys).toBe(before.keys + 1);
    expect(after.primitives).toBe(before.primitives + 1);
    expect(after.primitives).toBe(await PrimDb.countPrimitives(pool, workspace));
    const live = (await PrimDb.listKeys(pool, workspace)).filter((k) => k.revoked_at === null);
    expect(after.keys).toBe(live.length);
    expect(after.keys_used).toBe(live.filter((k) => k.last_used_at !== null).length);
    expect(after.connections).toBe((await PrimDb.listConnections(pool, workspace)).length);
    // Operations: what the usage figures say for the month (the roll-up or Redis's live count).
    expect(after.operations).toBeGreaterThanOrEqual(before.operations);
    await callerFor("owner").keys.revoke({ workspace, id: made.id });
    expect((await callerFor("member").workspace.overview({ workspace })).keys).toBe(before.keys);
  });

  it("runs SQL in the console: read-only for a member, writes for an admin", async () => {
    expect(
      await callerFor("member").primitive.dbQuery({ workspace, primitive: dbId, sql: "SELECT n FROM t" }),
    ).toMatchObject({
      columns: ["n"],
      rows: [{ n: 7 }],
    });
    const refused = await callerFor("member")
      .primitive.dbQuery({ workspace, primitive: dbId, sql: "INSERT INTO t VALUES (8)" })
      .then(
        () => "written",
        (err: { code: string }) => err.code,
      );
    expect(refused).not.toBe("written");
    await callerFor("admin").primitive.dbQuery({ workspace, primitive: dbId, sql: "INSERT INTO t VALUES (9)" });
    expect(
      await callerFor("member").primitive.dbQuery({ workspace, primitive: dbId, sql: "SELECT count(*) AS c FROM t" }),
    ).toMatchObject({ rows: [{ c: 2 }] });
  });

  it("browses a queue's jobs, a storage's objects through signed URLs, and refuses a view not on the list", async () => {
    const member = callerFor("member");
    const put = await member.primitive.sign({ workspace, primitive: storageId, key: "notes/a.txt", method: "PUT" });
    expect(put.url).toMatch(/\/v1\/signed\//);
    const uploaded = await fetch(new URL(put.url, cloud.url), { method: "PUT", body: "hello object" });
    expect(uploaded.status).toBeLessThan(300);
    const listed = (await member.primitive.browse({
      workspace,
      primitive: storageId,
      view: "storage.list",
      args: { prefix: "notes/" },
    })) as { data: { key: string }[] };
    expect(listed.data.map((o) => o.key)).toEqual(["notes/a.txt"]);
    const get = await member.primitive.sign({ workspace, primitive: storageId, key: "notes/a.txt", method: "GET" });
    expect(await (await fetch(new URL(get.url, cloud.url))).text()).toBe("hello object");
    await invoker.invoke(userPrincipal(users.owner, workspace, "owner"), "queue.send", queueId, {
      queue: "work",
      body: 1,
    });
    const queues = (await member.primitive.browse({ workspace, primitive: queueId, view: "queue.queues" })) as {
      data: { name: string }[];
    };
    expect(queues.data.map((q) => q.name)).toContain("work");
    await expect(
      member.primitive.browse({ workspace, primitive: queueId, view: "queue.purge" as "queue.queues" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("acts on a primitive with an operation of ACTIONS only; a member's db writes are refused, reads and kv writes not", async () => {
    const member = callerFor("member");
    await member.primitive.act({ workspace, primitive: kvId, op: "kv.set", args: { key: "edited", value: { n: 1 } } });
    expect(
      await member.primitive.act({ workspace, primitive: kvId, op: "kv.get", args: { key: "edited" } }),
    ).toMatchObject({
      value: { n: 1 },
    });
    await expect(
      member.primitive.act({
        workspace,
        primitive: dbId,
        op: "db.batch",
        args: { statements: [{ sql: "INSERT INTO t VALUES (1)" }] },
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await member.primitive.act({ workspace, primitive: dbId, op: "db.tables", args: {} })).toBeTruthy();
    await callerFor("admin").primitive.act({
      workspace,
      primitive: dbId,
      op: "db.batch",
      args: { statements: [{ sql: "INSERT INTO t VALUES (1)" }, { sql: "DELETE FROM t WHERE n = 1" }] },
    });
    // Not on the list (account-level or not a dashboard action): refused before the engine.
    await expect(
      member.primitive.act({ workspace, primitive: kvId, op: "primitive.delete" as "kv.get", args: {} }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    // The operation's own validation and the type check are the engine's.
    await expect(
      member.primitive.act({ workspace, primitive: queueId, op: "kv.set", args: { key: "x", value: 1 } }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(
      await member.primitive.act({ workspace, primitive: kvId, op: "kv.get", args: { key: "edited" } }),
    ).toBeTruthy();
  });

  it("sets secrets as an admin (a member is refused), pages their names by cursor, never a value", async () => {
    const admin = callerFor("admin");
    const member = callerFor("member");
    const vault = await invoker.invoke<{ id: string }>(
      userPrincipal(users.owner, workspace, "owner"),
      "primitive.create",
      null,
      { name: `v${++seq}`, type: "vault", group: "app" },
    );
    const target = { workspace, primitive: vault.id };
    for (const name of ["A_ONE", "B_TWO", "C_THREE"]) {
      await admin.primitive.act({ ...target, op: "vault.put", args: { name, value: `value-of-${name}` } });
    }
    await expect(
      member.primitive.act({ ...target, op: "vault.put", args: { name: "D_FOUR", value: "value-of-D" } }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    type Listing = { data: { name: string; version: number }[]; next_cursor: string | null };
    const first = (await member.primitive.browse({ ...target, view: "vault.list", args: { limit: 2 } })) as Listing;
    expect(first.data.map((s) => s.name)).toEqual(["A_ONE", "B_TWO"]);
    const second = (await member.primitive.browse({
      ...target,
      view: "vault.list",
      args: { limit: 2, cursor: first.next_cursor },
    })) as Listing;
    expect([second.data.map((s) => s.name), second.next_cursor]).toEqual([["C_THREE"], null]);
    expect(JSON.stringify([first, second])).not.toContain("value-of-");
  });

  it("writes an fs file from text or base64 through act (no stream on the wire), and refuses neither or both", async () => {
    const member = callerFor("member");
    const write = (args: Record<string, unknown>) =>
      member.primitive.act({ workspace, primitive: fsId, op: "fs.write", args: { path: "/edit/a.txt", ...args } });
    expect(await write({ text: "héllo" })).toMatchObject({ path: "/edit/a.txt", size: Buffer.byteLength("héllo") });
    expect(await member.primitive.preview({ workspace, primitive: fsId, path: "/edit/a.txt" })).toMatchObject({
      kind: "text",
      text: "héllo",
    });
    await write({ base64: Buffer.from([0, 1, 2]).toString("base64") });
    expect(await member.primitive.preview({ workspace, primitive: fsId, path: "/edit/a.txt" })).toMatchObject({
      kind: "binary",
      size: 3,
    });
    for (const args of [{}, { text: "a", base64: "YQ==" }]) {
      await expect(write(args)).rejects.toMatchObject({
        code: "BAD_REQUEST",
        cause: { code: "invalid_request" },
      });
    }
    // The operation's own checks stay the engine's: a file where a directory is (409 fs_conflict).
    await expect(write({ path: "/edit", text: "x" })).rejects.toMatchObject({
      code: "CONFLICT",
      cause: { code: "fs_conflict" },
    });
  });

  it("pages a queue's jobs and a store's objects through browse (cursor), folders by delimiter", async () => {
    const owner = userPrincipal(users.owner, workspace, "owner");
    for (let n = 0; n < 3; n++) await invoker.invoke(owner, "queue.send", queueId, { queue: "paged", body: n });
    const member = callerFor("member");
    const page = (cursor?: string) =>
      member.primitive.browse({
        workspace,
        primitive: queueId,
        view: "queue.messages",
        args: { queue: "paged", status: "ready", limit: 2, ...(cursor === undefined ? {} : { cursor }) },
      }) as Promise<{ data: { body: number }[]; next_cursor: string | null }>;
    const first = await page();
    expect(first.data.map((j) => j.body)).toEqual([0, 1]);
    const second = await page(first.next_cursor ?? "");
    expect(second.data.map((j) => j.body)).toEqual([2]);
    expect(second.next_cursor).toBeNull();
    await invoker.invoke(owner, "storage.put", storageId, {
      key: "dir/inner.txt",
      body: Readable.from([Buffer.from("x")]),
    });
    const listed = (await member.primitive.browse({
      workspace,
      primitive: storageId,
      view: "storage.list",
      args: { prefix: "", delimiter: "/" },
    })) as { prefixes: string[] };
    expect(listed.prefixes).toContain("dir/");
  });

  it("previews an fs file: text as text, an image as base64, binary and large files only described", async () => {
    const member = callerFor("member");
    const preview = (path: string) => member.primitive.preview({ workspace, primitive: fsId, path });
    expect(await preview("/notes/readme.md")).toMatchObject({
      kind: "text",
      size: Buffer.byteLength("# Hello\nünïcode ok\n"),
      text: "# Hello\nünïcode ok\n",
    });
    expect(await preview("/bin/blob")).toMatchObject({ kind: "binary", size: 5 });
    expect(await preview("/bin/blob")).not.toHaveProperty("text");
    const image = await preview("/img/dot.png");
    expect(image).toMatchObject({ kind: "image", content_type: "image/png", base64: "iVBORw0KGgo=" });
    const big = await preview("/big.txt");
    expect(big).toMatchObject({ kind: "too_large", size: 300 * 1024 });
    expect(big).not.toHaveProperty("text");
    expect(await preview("/notes")).toEqual({ kind: "directory", path: "/notes" });
    await expect(preview("/missing.txt")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("reports usage against the plan, and reads the audit trail by filters", async () => {
    await pool.query("UPDATE workspaces SET plan = 'starter' WHERE id = $1", [workspace]);
    await revocations.planChanged(workspace);
    const usage = await callerFor("billing").usage.summary({ workspace });
    expect(usage).toMatchObject({ workspace: { id: workspace, plan: "starter" }, caps: PrimDb.STARTER_CAPS });
    expect(usage.primitives).toBeGreaterThan(0);
    // The audit log is a Pro feature: the limiter refuses it to Starter.
    await expect(callerFor("admin").audit.list({ workspace, action: "kv." })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("Pro plan"),
    });
    await pool.query("UPDATE workspaces SET plan = 'pro' WHERE id = $1", [workspace]);
    await revocations.planChanged(workspace);
    const page = await callerFor("admin").audit.list({ workspace, action: "kv.", actor: "user:*" });
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((e) => e.action.startsWith("kv.") && e.actor.startsWith("user:"))).toBe(true);
    expect((await callerFor("owner").usage.summary({ workspace })).caps).toBeNull();
  });

  it("invites by mail and link: only the invited, confirmed address accepts, once; an admin cannot invite an owner", async () => {
    const made = await callerFor("admin").members.invite({ workspace, email: "New.Person@acme.test", role: "member" });
    expect(made.link).toMatch(/^https:\/\/dash\.prim\.test\/invite\/inv_/);
    expect(made.mailed).toBe(true);
    const sent = await capture.waitFor((m) => m.to.includes("new.person@acme.test"));
    expect(sent.subject).toBe("admin@acme.test invited you to Acme on Prim");
    expect(sent.links).toEqual([made.link]);
    const token = made.link.split("/").pop() as string;
    expect((await callerFor("admin").members.invitations({ workspace })).map((i) => i.email)).toContain(
      "new.person@acme.test",
    );
    await expect(callerFor("outsider").invitation.accept({ token })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const invitee = await createUser(pool, { email: "new.person@acme.test", password: "password123" });
    // As a sign-up whose mailed link was not opened yet (the library's flag; the dashboard's
    // own flow is email-verification.test.ts): the link alone does not let it in.
    await pool.query("UPDATE users SET email_verified = false WHERE id = $1", [invitee.id]);
    const as = callerWith(testContext({ pool, invoker, mail, apiUrl: cloud.url }), {
      id: invitee.id,
      email: "new.person@acme.test",
    });
    await expect(as.invitation.accept({ token })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(/^confirm your email address first/),
    });
    await pool.query("UPDATE users SET email_verified = true WHERE id = $1", [invitee.id]);
    expect(await as.invitation.accept({ token })).toEqual({ workspace, role: "member" });
    expect((await as.workspace.list()).map((w) => w.id)).toContain(workspace);
    await expect(as.invitation.accept({ token })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      callerFor("admin").members.invite({ workspace, email: "boss@acme.test", role: "owner" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(
      callerFor("admin").members.invite({ workspace, email: "member@acme.test", role: "member" }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("keeps the last owner, and lets only an owner remove an owner", async () => {
    await expect(callerFor("owner").members.leave({ workspace })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const secondOwner = await extraMember("owner");
    await expect(callerFor("admin").members.remove({ workspace, user: secondOwner })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await callerFor("owner").members.remove({ workspace, user: secondOwner });
    await expect(callerFor("owner").members.remove({ workspace, user: users.owner.id })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });

  it("lets only an owner switch secret export (an admin gets 403 and changes nothing); each switch is audited", async () => {
    const owner = callerFor("owner");
    expect(await owner.settings.secretExport({ workspace })).toEqual({ enabled: false });
    await expect(callerFor("admin").settings.setSecretExport({ workspace, enabled: true })).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringContaining("needs owner"),
    });
    expect(await owner.settings.secretExport({ workspace })).toEqual({ enabled: false });
    expect(await owner.settings.setSecretExport({ workspace, enabled: true })).toEqual({ enabled: true });
    expect(await owner.settings.secretExport({ workspace })).toEqual({ enabled: true });
    expect(await owner.settings.setSecretExport({ workspace, enabled: false })).toEqual({ enabled: false });
    const trail = await invoker.invoke<{ data: { action: string; actor: string; primitive: string }[] }>(
      userPrincipal(users.owner, workspace, "owner"),
      "audit.list",
      null,
      { type: "workspace", action: "secret_export." },
    );
    expect(trail.data.slice(0, 2)).toEqual([
      expect.objectContaining({
        action: "secret_export.disable",
        actor: `user:${users.owner.id}`,
        primitive: "workspace",
      }),
      expect.objectContaining({
        action: "secret_export.enable",
        actor: `user:${users.owner.id}`,
        primitive: "workspace",
      }),
    ]);
  });
});
