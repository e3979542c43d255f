// Issue 38, item 2: every control action the dashboard offers is in the workspace's audit log.
// Each row of the table performs one action through the dashboard's tRPC procedure (as the
// signed-in user), then reads it back through the real REST API (`GET /v1/audit?type=workspace`
// with the workspace's key): the entry's actor is `user:<id>`, its target and detail are the
// action's, it is a control entry (`primitive` `workspace`, `primitive_id` null, group empty),
// and no key, invitation token or password appears anywhere in it.
import { randomBytes } from "node:crypto";
import * as PrimDb from "@prim/db";
import { createKey, createUser, createWorkspace, Revocations } from "@prim/db";
import { call, startCloud, type TestCloud } from "@prim/testkit/cloud";
import type { AuditEntry } from "@prim/wire";
import { keyStart } from "@prim/wire";
import { RemoteInvoker } from "@prim/wire/invoke";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userPrincipal } from "../src/server/trpc/init";
import { callerWith, testContext } from "./trpc-caller";

const SECRET = randomBytes(24).toString("hex");
const PASSWORD = "password-never-logged";
let cloud: TestCloud;
let pool: pg.Pool;
let invoker: RemoteInvoker;
let revocations: Revocations;
let workspace: string;
/** The workspace's key for the read-back (made by the operator). */
let readKey: string;
const users: Record<"owner" | "invitee" | "leaver", { id: string; email: string }> = {} as never;
/** Every secret handed out during the run: none may appear in an audit entry. */
const secrets: string[] = [PASSWORD, SECRET];
/** The OAuth connection the leaver makes and ends. */
let connection: string;

function callerFor(user: { id: string; email: string }) {
  const context = testContext({ pool, publish: (message) => revocations.publish(message), invoker, apiUrl: cloud.url });
  return callerWith(context, user);
}

beforeAll(async () => {
  cloud = await startCloud("ctlaudit-web", { PRIM_INTERNAL_SECRET: SECRET });
  pool = cloud.api.hub.pool as pg.Pool;
  invoker = new RemoteInvoker({ url: cloud.internalUrl, secret: SECRET });
  revocations = new Revocations("redis://127.0.0.1:6379");
  for (const who of ["owner", "invitee", "leaver"] as const) {
    const email = `${who}@audit.test`;
    users[who] = { id: (await createUser(pool, { email, password: PASSWORD })).id, email };
  }
  const made = await createWorkspace(pool, { name: "Audited", plan: "pro", ownerId: users.owner.id });
  workspace = made.workspace.id;
  readKey = made.key;
  secrets.push(readKey);
  await invoker.invoke(userPrincipal(users.owner, workspace, "owner"), "group.create", null, { name: "app" });
}, 60_000);

afterAll(async () => {
  await revocations?.close();
  await cloud?.stop();
});

/** The control entries with `action` of the key's workspace, newest first, through REST. */
async function entries(key: string, action: string): Promise<AuditEntry[]> {
  const res = await call(cloud.url, key, "GET", `/v1/audit?type=workspace&action=${encodeURIComponent(action)}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

const owner = () => callerFor(users.owner);

/**
 * One row per action: `act` performs it through the dashboard and answers the entry expected
 * (the key to read with, when not the shared workspace's, and what target and detail must hold).
 */
const ACTIONS: {
  action: string;
  act: () => Promise<{ key?: string; target: string; detail: Record<string, unknown> }>;
}[] = [
  {
    action: "workspace.create",
    act: async () => {
      const ws = await owner().workspace.create({ name: "Second" });
      const key = (await createKey(pool, { workspace: ws.id })).key;
      secrets.push(key);
      await pool.query("UPDATE workspaces SET plan = 'pro' WHERE id = $1", [ws.id]);
      await revocations.planChanged(ws.id);
      return {
        key,
        target: ws.id,
        detail: { name: "Second", plan: "starter", owner: `user:${users.owner.id}` },
      };
    },
  },
  {
    action: "workspace.rename",
    act: async () => {
      await owner().workspace.rename({ workspace, name: "Audited Inc" });
      return { target: workspace, detail: { from: "Audited", to: "Audited Inc" } };
    },
  },
  {
    action: "key.create",
    act: async () => {
      const made = await owner().keys.create({ workspace, name: "ci", group: "app", tools: ["kv_*"], readOnly: true });
      secrets.push(made.key);
      return {
        target: made.id,
        detail: { start: keyStart(made.key), name: "ci", group: "app", tools: ["kv_*"], read_only: true },
      };
    },
  },
  {
    action: "key.revoke",
    act: async () => {
      const made = await owner().keys.create({ workspace, name: "short-lived" });
      secrets.push(made.key);
      await owner().keys.revoke({ workspace, id: made.id });
      return { target: made.id, detail: { start: keyStart(made.key) } };
    },
  },
  {
    action: "invitation.create",
    act: async () => {
      const made = await owner().members.invite({ workspace, email: users.invitee.email, role: "admin" });
      secrets.push(made.link.split("/").pop() as string);
      return { target: made.id, detail: { email: users.invitee.email, role: "admin" } };
    },
  },
  {
    action: "invitation.accept",
    act: async () => {
      const invited = await owner().members.invite({ workspace, email: users.leaver.email, role: "member" });
      const token = invited.link.split("/").pop() as string;
      secrets.push(token);
      await callerFor(users.leaver).invitation.accept({ token });
      return { target: invited.id, detail: { email: users.leaver.email, role: "member" } };
    },
  },
  {
    action: "member.add",
    act: async () => ({ target: `user:${users.leaver.id}`, detail: { role: "member" } }), // by the accept above
  },
  {
    action: "member.role",
    act: async () => {
      const user = await createUser(pool, { email: "promoted@audit.test", password: PASSWORD, workspace });
      await owner().members.setRole({ workspace, user: user.id, role: "admin" });
      return { target: `user:${user.id}`, detail: { from: "member", to: "admin" } };
    },
  },
  {
    action: "invitation.withdraw",
    act: async () => {
      const pending = (await owner().members.invitations({ workspace })).find((i) => i.email === users.invitee.email);
      await owner().members.revokeInvitation({ workspace, id: pending?.id as string });
      return { target: pending?.id as string, detail: { email: users.invitee.email, role: "admin" } };
    },
  },
  {
    action: "oauth.disconnect",
    act: async () => {
      const group = await pool.query<{ id: string }>("SELECT id FROM groups WHERE workspace_id = $1", [workspace]);
      // What apps/api's authorization server records when a consent completes (oauth/mount.ts).
      connection = await PrimDb.recordConnection(pool, {
        grantId: `grant-${randomBytes(4).toString("hex")}`,
        clientId: "client-1",
        clientName: "Editor",
        user: users.leaver.id,
        workspace,
        groupId: group.rows[0]?.id as string,
        tools: ["kv_get"],
      });
      await callerFor(users.leaver).connections.disconnect({ workspace, id: connection });
      return { target: connection, detail: { client_id: "client-1", reason: "disconnected" } };
    },
  },
  {
    action: "oauth.connect",
    act: async () => ({
      target: connection, // by the consent above
      detail: { client_id: "client-1", client_name: "Editor", group: "app", tools: ["kv_get"] },
    }),
  },
  {
    action: "member.remove",
    act: async () => {
      await owner().members.remove({ workspace, user: users.leaver.id });
      return { target: `user:${users.leaver.id}`, detail: { role: "member", connections: 0 } };
    },
  },
  {
    action: "secret_export.enable",
    act: async () => {
      await owner().settings.setSecretExport({ workspace, enabled: true });
      return { target: workspace, detail: { was: false } };
    },
  },
  {
    action: "secret_export.disable",
    act: async () => {
      await owner().settings.setSecretExport({ workspace, enabled: false });
      return { target: workspace, detail: { was: true } };
    },
  },
];

describe("the dashboard's control actions in GET /v1/audit?type=workspace", () => {
  for (const { action, act } of ACTIONS) {
    it(`${action}`, async () => {
      const expected = await act();
      const found = await entries(expected.key ?? readKey, action);
      const entry = found.find((e) => e.target === expected.target);
      expect(entry).toMatchObject({
        group: "",
        primitive: "workspace",
        primitive_id: null,
        instance: null,
        action,
        target: expected.target,
        detail: expected.detail,
      });
      // The leaver accepted and disconnected; everything else was the owner's doing.
      const actor = ["invitation.accept", "member.add", "oauth.connect", "oauth.disconnect"].includes(action)
        ? users.leaver.id
        : users.owner.id;
      expect(entry?.actor).toBe(`user:${actor}`);
      const text = JSON.stringify(entry);
      for (const secret of secrets) expect(text).not.toContain(secret);
    });
  }

  it("are what the dashboard's audit viewer lists with the type filter (newest first)", async () => {
    const page = await owner().audit.list({ workspace, type: "workspace" });
    expect(page.data.every((e) => e.primitive === "workspace")).toBe(true);
    expect(page.data[0]?.action).toBe("secret_export.disable");
    const text = JSON.stringify(page.data);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it("record nothing for an action refused (an unknown key, a withdrawn invitation)", async () => {
    const before = (await entries(readKey, "key.")).length;
    await expect(owner().keys.revoke({ workspace, id: "key_nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(owner().members.revokeInvitation({ workspace, id: "inv_nope" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await entries(readKey, "key.")).length).toBe(before);
    expect((await entries(readKey, "invitation.withdraw")).length).toBe(1);
  });
});
