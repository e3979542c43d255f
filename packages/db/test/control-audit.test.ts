// The control plane's audit (CLOUD.md, "Audit of the control plane"), function by function: each
// row performs one action through @prim/db's control module and finds exactly one entry for it
// in the `audit` table — `primitive` `workspace`, group empty, `primitive_id` and `instance`
// null, the actor, target and detail the action's — with no key, token or password in it. An
// action refused changes nothing and records nothing (the entry is in the change's transaction).
// Read back through REST, per surface: apps/web/test/control-audit.test.ts (dashboard) and
// apps/api/test/control-audit.test.ts (prim admin, Stripe).
import {
  acceptInvitation,
  createKey,
  createUser,
  createWorkspace,
  expireGrace,
  inviteMember,
  migrate,
  openPool,
  recordConnection,
  removeMember,
  renameWorkspace,
  revokeGrant,
  revokeInvitation,
  revokeKey,
  saveSubscription,
  setMemberRole,
  setPlan,
} from "@prim/db";
import { freshDatabase } from "@prim/testkit";
import { keyStart } from "@prim/wire";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const db = freshDatabase("ctlaudit");
let pool: pg.Pool;
let workspace: string;
let owner: string;
let groupId: string;
const PASSWORD = "password-never-recorded";
const secrets: string[] = [PASSWORD];
const noop = async () => {};

beforeAll(async () => {
  await migrate({ databaseUrl: db.url });
  pool = await openPool(db.url);
  owner = (await createUser(pool, { email: "owner@ctl.test", password: PASSWORD })).id;
  const made = await createWorkspace(pool, { name: "Ctl", plan: "pro", ownerId: owner, actor: `user:${owner}` });
  workspace = made.workspace.id;
  secrets.push(made.key);
  groupId = `grp_${workspace}`;
  await pool.query("INSERT INTO groups (id, workspace_id, name, namespace, created_at) VALUES ($1, $2, 'app', $3, 0)", [
    groupId,
    workspace,
    groupId,
  ]);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await db.drop();
});

interface Row {
  group_name: string;
  primitive: string;
  primitive_id: string | null;
  instance: string | null;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
}

const entries = async (action: string, ws = workspace): Promise<Row[]> =>
  (
    await pool.query<Row>(
      `SELECT group_name, primitive, primitive_id, instance, actor, action, target, detail FROM audit
        WHERE workspace_id = $1 AND action = $2 ORDER BY seq`,
      [ws, action],
    )
  ).rows;

let seq = 0;
const newUser = async (role?: string) => {
  seq++;
  const email = `u${seq}@ctl.test`;
  const made = await createUser(pool, { email, password: PASSWORD, ...(role ? { workspace, role } : {}) });
  return { id: made.id, email };
};

/** Each row: the action performed, and the one entry it must leave (actor, target, detail). */
const ACTIONS: { action: string; act: () => Promise<{ actor: string; target: string; detail: object }> }[] = [
  {
    action: "workspace.rename",
    act: async () => {
      await renameWorkspace(pool, { workspace, name: "Ctl 2", actor: `user:${owner}` });
      return { actor: `user:${owner}`, target: workspace, detail: { from: "Ctl", to: "Ctl 2" } };
    },
  },
  {
    action: "member.role",
    act: async () => {
      const user = await newUser("member");
      await setMemberRole(pool, { workspace, user: user.id, role: "billing", actor: `user:${owner}` });
      return { actor: `user:${owner}`, target: `user:${user.id}`, detail: { from: "member", to: "billing" } };
    },
  },
  {
    action: "member.remove",
    act: async () => {
      const user = await newUser("admin");
      await removeMember(pool, { workspace, user: user.id, actor: `user:${owner}` }, noop);
      return { actor: `user:${owner}`, target: `user:${user.id}`, detail: { role: "admin", connections: 0 } };
    },
  },
  {
    action: "invitation.accept",
    act: async () => {
      const user = await newUser();
      const made = await inviteMember(pool, {
        workspace,
        email: user.email,
        role: "member",
        invitedBy: `user:${owner}`,
      });
      secrets.push(made.token);
      await acceptInvitation(pool, made.token, user);
      return { actor: `user:${user.id}`, target: made.id, detail: { email: user.email, role: "member" } };
    },
  },
  {
    action: "invitation.withdraw",
    act: async () => {
      const made = await inviteMember(pool, { workspace, email: "x@ctl.test", role: "admin", invitedBy: "admin" });
      secrets.push(made.token);
      await revokeInvitation(pool, workspace, made.id, "admin");
      return { actor: "admin", target: made.id, detail: { email: "x@ctl.test", role: "admin" } };
    },
  },
  {
    action: "key.create",
    act: async () => {
      const key = await createKey(pool, { workspace, name: "agent", tools: ["kv_*"], readOnly: true });
      secrets.push(key.key);
      expect(key).toMatchObject({ group: null, tools: ["kv_*"], read_only: true });
      return {
        actor: "admin",
        target: key.id,
        detail: { start: keyStart(key.key), name: "agent", group: null, tools: ["kv_*"], read_only: true },
      };
    },
  },
  {
    action: "oauth.connect",
    act: async () => {
      const id = await recordConnection(pool, {
        grantId: "grant-read-only",
        clientId: "c2",
        clientName: "Reader",
        user: owner,
        workspace,
        groupId,
        tools: ["*"],
        readOnly: true,
      });
      return {
        actor: `user:${owner}`,
        target: id,
        detail: { client_id: "c2", client_name: "Reader", group: "app", tools: ["*"], read_only: true },
      };
    },
  },
  {
    action: "key.revoke",
    act: async () => {
      const key = await createKey(pool, { workspace, createdBy: `user:${owner}` });
      secrets.push(key.key);
      await revokeKey(pool, key.id, noop, workspace, `user:${owner}`);
      await revokeKey(pool, key.id, noop, workspace, `user:${owner}`); // again: recorded once
      return { actor: `user:${owner}`, target: key.id, detail: { start: keyStart(key.key) } };
    },
  },
  {
    action: "oauth.disconnect",
    act: async () => {
      const grant = "grant-replayed";
      const id = await recordConnection(pool, {
        grantId: grant,
        clientId: "c1",
        clientName: null,
        user: owner,
        workspace,
        groupId,
        tools: ["kv_get"],
      });
      await revokeGrant(pool, grant, noop); // the authorization server saw a code used twice
      return { actor: "oauth", target: id, detail: { client_id: "c1", reason: "code or refresh token reused" } };
    },
  },
  {
    action: "plan.change",
    act: async () => {
      await saveSubscription(pool, {
        workspace,
        id: "sub_1",
        status: "past_due",
        cancelAtPeriodEnd: false,
        currentPeriodEnd: null,
      });
      await pool.query("UPDATE subscriptions SET grace_until = now() - interval '1 hour' WHERE workspace_id = $1", [
        workspace,
      ]);
      expect(await expireGrace(pool, new Date())).toEqual([workspace]);
      return {
        actor: "billing",
        target: workspace,
        detail: { from: "pro", to: "starter", reason: "grace period ended unpaid" },
      };
    },
  },
];

describe("control actions are audited in their own transaction", () => {
  for (const { action, act } of ACTIONS) {
    it(action, async () => {
      const before = (await entries(action)).length;
      const expected = await act();
      const added = (await entries(action)).slice(before);
      expect(added).toEqual([
        { group_name: "", primitive: "workspace", primitive_id: null, instance: null, action, ...expected },
      ]);
      const text = JSON.stringify(added);
      for (const secret of secrets) expect(text).not.toContain(secret);
    });
  }

  it("workspace.create, key.create and member.add name who did it; the key's id and start only", async () => {
    const [created] = await entries("workspace.create");
    expect(created).toMatchObject({
      actor: `user:${owner}`,
      target: workspace,
      detail: { name: "Ctl", plan: "pro", owner: `user:${owner}` },
    });
    const keys = await entries("key.create");
    expect(keys[0]?.detail).toEqual({
      start: keyStart(secrets[1] ?? ""),
      name: "workspace key",
      group: null,
      tools: null,
    });
    expect((await entries("member.add")).map((e) => e.actor)).toContain("admin"); // createUser --workspace
    expect(JSON.stringify(keys)).not.toContain(secrets[1]);
  });

  it("records nothing for a refused action: the last owner's role, an unknown key, a bad plan", async () => {
    const count = async () =>
      (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM audit WHERE workspace_id = $1", [workspace]))
        .rows[0]?.n;
    const before = await count();
    await expect(
      setMemberRole(pool, { workspace, user: owner, role: "admin", actor: `user:${owner}` }),
    ).rejects.toMatchObject({ code: "conflict" });
    await expect(revokeKey(pool, "key_nope", noop, workspace, "admin")).rejects.toMatchObject({ code: "not_found" });
    await expect(setPlan(pool, { workspace: "ws_nope", plan: "pro" })).rejects.toMatchObject({ code: "not_found" });
    await expect(renameWorkspace(pool, { workspace, name: " ", actor: "admin" })).rejects.toMatchObject({
      code: "invalid_request",
    });
    expect(await count()).toBe(before);
    // The rightful call succeeds and is recorded.
    await setPlan(pool, { workspace, plan: "pro" });
    expect(await count()).toBe((before ?? 0) + 1);
  });
});
