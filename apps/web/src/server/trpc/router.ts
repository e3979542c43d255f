import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { invitationMail } from "../mail-messages";
import { billingRouter } from "./billing";
import { auditRouter, dataRouter, usageRouter } from "./data";
import { authed, inWorkspace, type Role, router } from "./init";
import { PERMISSIONS } from "./permissions";
import { primitiveRouter } from "./primitive";
import { settingsRouter } from "./settings";

export { PERMISSIONS };

export const workspaceName = z.string().trim().min(1, "a name is required").max(80, "at most 80 characters");
export const keyInput = z.object({
  name: z.string().trim().max(80).optional(),
  group: z.string().min(1).optional(),
  tools: z
    .array(z.string().regex(/^[a-z_*]{1,64}$/, "a tool name or pattern (a-z, _ and *)"))
    .min(1)
    .optional(),
});

async function owners(ctx: { pool: import("pg").Pool }, workspace: string): Promise<number> {
  const { rows } = await ctx.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM members WHERE workspace_id = $1 AND role = 'owner'",
    [workspace],
  );
  return rows[0]?.n ?? 0;
}

export const appRouter = router({
  data: dataRouter,
  primitive: primitiveRouter,
  usage: usageRouter,
  audit: auditRouter,
  billing: billingRouter,
  settings: settingsRouter,
  workspace: router({
    list: authed.query(async ({ ctx }) => {
      const { rows } = await ctx.pool.query<{ id: string; name: string; plan: string; role: Role }>(
        `SELECT w.id, w.name, w.plan, m.role FROM members m JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.user_id = $1 ORDER BY w.name, w.id`,
        [ctx.user.id],
      );
      return rows;
    }),
    create: authed.input(z.object({ name: workspaceName })).mutation(async ({ ctx, input }) => {
      const { workspace } = await ctx.db.createWorkspace(ctx.pool, {
        name: input.name,
        ownerId: ctx.user.id,
        key: false,
      });
      return workspace;
    }),
    rename: inWorkspace(PERMISSIONS["workspace.rename"])
      .input(z.object({ name: workspaceName }))
      .mutation(async ({ ctx, input }) => {
        await ctx.pool.query("UPDATE workspaces SET name = $2 WHERE id = $1", [input.workspace, input.name]);
        return { id: input.workspace, name: input.name };
      }),
  }),
  members: router({
    list: inWorkspace(PERMISSIONS["members.list"]).query(async ({ ctx, input }) => {
      const { rows } = await ctx.pool.query<{ id: string; email: string; name: string; role: Role }>(
        `SELECT u.id, u.email, u.name, m.role FROM members m JOIN users u ON u.id = m.user_id
          WHERE m.workspace_id = $1 ORDER BY u.email`,
        [input.workspace],
      );
      return rows;
    }),
    remove: inWorkspace(PERMISSIONS["members.remove"])
      .input(z.object({ user: z.string().min(1) }))
      .mutation(async ({ ctx, input }) => {
        if (input.user === ctx.user.id) throw new TRPCError({ code: "BAD_REQUEST", message: "to leave, use leave" });
        const target = await ctx.pool.query<{ role: Role }>(
          "SELECT role FROM members WHERE workspace_id = $1 AND user_id = $2",
          [input.workspace, input.user],
        );
        const role = target.rows[0]?.role;
        if (role === undefined) throw new TRPCError({ code: "NOT_FOUND", message: "no such member" });
        if (role === "owner" && ctx.role !== "owner") {
          throw new TRPCError({ code: "FORBIDDEN", message: "only an owner removes an owner" });
        }
        // Removal ends that user's OAuth connections here at once (their tokens answer 401).
        return ctx.db.removeMember(ctx.pool, { workspace: input.workspace, user: input.user }, ctx.publish);
      }),
    /** An invitation link for `email`: mailed to them, and shown to the inviter (to copy). */
    invite: inWorkspace(PERMISSIONS["members.invite"])
      .input(
        z.object({
          email: z.string().email("an email address"),
          role: z.enum(["owner", "admin", "member", "billing"]),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        if (input.role === "owner" && ctx.role !== "owner") {
          throw new TRPCError({ code: "FORBIDDEN", message: "only an owner invites an owner" });
        }
        const made = await ctx.db.inviteMember(ctx.pool, {
          workspace: input.workspace,
          email: input.email,
          role: input.role,
          invitedBy: `user:${ctx.user.id}`,
        });
        const { token, ...invitation } = made;
        const link = `${ctx.dashboardUrl}/invite/${token}`;
        const { rows } = await ctx.pool.query<{ name: string }>("SELECT name FROM workspaces WHERE id = $1", [
          input.workspace,
        ]);
        const mail = invitationMail({
          to: invitation.email,
          workspace: rows[0]?.name ?? input.workspace,
          role: invitation.role,
          inviter: ctx.user.email,
          link,
        });
        // The link is shown either way: a mail server that does not answer must not lose it.
        const mailed = await ctx.mail(mail).then(
          () => true,
          () => false,
        );
        return { ...invitation, link, mailed };
      }),
    invitations: inWorkspace(PERMISSIONS["members.invitations"]).query(({ ctx, input }) =>
      ctx.db.listInvitations(ctx.pool, input.workspace),
    ),
    revokeInvitation: inWorkspace(PERMISSIONS["members.revokeInvitation"])
      .input(z.object({ id: z.string().min(1) }))
      .mutation(async ({ ctx, input }) => {
        await ctx.db.revokeInvitation(ctx.pool, input.workspace, input.id);
        return { id: input.id };
      }),
    leave: inWorkspace(PERMISSIONS["members.leave"]).mutation(async ({ ctx, input }) => {
      if (ctx.role === "owner" && (await owners(ctx, input.workspace)) === 1) {
        throw new TRPCError({ code: "BAD_REQUEST", message: "the last owner cannot leave; make another owner first" });
      }
      return ctx.db.removeMember(ctx.pool, { workspace: input.workspace, user: ctx.user.id }, ctx.publish);
    }),
  }),
  invitation: router({
    /** Joins the workspace of an invitation link, as the signed-in user with the invited email. */
    accept: authed
      .input(z.object({ token: z.string().min(1).max(100) }))
      .mutation(({ ctx, input }) => ctx.db.acceptInvitation(ctx.pool, input.token, ctx.user)),
  }),
  keys: router({
    list: inWorkspace(PERMISSIONS["keys.list"]).query(async ({ ctx, input }) => {
      const { rows } = await ctx.pool.query<{
        id: string;
        start: string;
        name: string | null;
        group: string | null;
        tools: string[] | null;
        created_by: string | null;
        created_at: Date;
        last_used_at: Date | null;
        revoked_at: Date | null;
      }>(
        `SELECT k.id, k.start, k.name, g.name AS group, k.tools, k.created_by, k.created_at, k.last_used_at, k.revoked_at
           FROM api_keys k LEFT JOIN groups g ON g.id = k.group_id
          WHERE k.workspace_id = $1 ORDER BY k.created_at DESC, k.id DESC`,
        [input.workspace],
      );
      return rows;
    }),
    create: inWorkspace(PERMISSIONS["keys.create"])
      .input(keyInput)
      .mutation(async ({ ctx, input }) =>
        // The key is in this answer only: it is stored as its hash.
        ctx.db.createKey(ctx.pool, {
          workspace: input.workspace,
          group: input.group,
          tools: input.tools,
          name: input.name,
          createdBy: `user:${ctx.user.id}`,
        }),
      ),
    revoke: inWorkspace(PERMISSIONS["keys.revoke"])
      .input(z.object({ id: z.string().min(1) }))
      .mutation(async ({ ctx, input }) => ctx.db.revokeKey(ctx.pool, input.id, ctx.publish, input.workspace)),
  }),
  connections: router({
    list: inWorkspace(PERMISSIONS["connections.list"]).query(async ({ ctx, input }) =>
      ctx.db.listConnections(ctx.pool, input.workspace),
    ),
    disconnect: inWorkspace(PERMISSIONS["connections.disconnect"])
      .input(z.object({ id: z.string().min(1) }))
      .mutation(async ({ ctx, input }) => {
        await ctx.db.disconnect(ctx.pool, { workspace: input.workspace, id: input.id }, ctx.publish);
        return { id: input.id };
      }),
  }),
});

export type AppRouter = typeof appRouter;
