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

/** A role as input: @prim/db's `ROLES`, its values written here (this module does not load @prim/db) and checked against its type. */
const roleInput = z.enum(["owner", "admin", "member", "billing"] as const satisfies readonly Role[]);

export const workspaceName = z.string().trim().min(1, "a name is required").max(80, "at most 80 characters");
export const keyInput = z.object({
  name: z.string().trim().max(80).optional(),
  group: z.string().min(1).optional(),
  tools: z
    .array(z.string().regex(/^[a-z_*]{1,64}$/, "a tool name or pattern (a-z, _ and *)"))
    .min(1)
    .optional(),
});

export const appRouter = router({
  data: dataRouter,
  primitive: primitiveRouter,
  usage: usageRouter,
  audit: auditRouter,
  billing: billingRouter,
  settings: settingsRouter,
  workspace: router({
    list: authed.query(({ ctx }) => ctx.db.workspacesOf(ctx.pool, ctx.user.id)),
    create: authed.input(z.object({ name: workspaceName })).mutation(async ({ ctx, input }) => {
      const { workspace } = await ctx.db.createWorkspace(ctx.pool, {
        name: input.name,
        ownerId: ctx.user.id,
        key: false,
        actor: `user:${ctx.user.id}`,
      });
      return workspace;
    }),
    rename: inWorkspace(PERMISSIONS["workspace.rename"])
      .input(z.object({ name: workspaceName }))
      .mutation(({ ctx, input }) =>
        ctx.db.renameWorkspace(ctx.pool, {
          workspace: input.workspace,
          name: input.name,
          actor: `user:${ctx.user.id}`,
        }),
      ),
  }),
  members: router({
    list: inWorkspace(PERMISSIONS["members.list"]).query(({ ctx, input }) =>
      ctx.db.listMembers(ctx.pool, input.workspace),
    ),
    remove: inWorkspace(PERMISSIONS["members.remove"])
      .input(z.object({ user: z.string().min(1) }))
      .mutation(async ({ ctx, input }) => {
        if (input.user === ctx.user.id) throw new TRPCError({ code: "BAD_REQUEST", message: "to leave, use leave" });
        const role = (await ctx.db.membership(ctx.pool, input.workspace, input.user))?.role;
        if (role === undefined) throw new TRPCError({ code: "NOT_FOUND", message: "no such member" });
        if (role === "owner" && ctx.role !== "owner") {
          throw new TRPCError({ code: "FORBIDDEN", message: "only an owner removes an owner" });
        }
        // Removal ends that user's OAuth connections here at once (their tokens answer 401).
        const actor = `user:${ctx.user.id}` as const;
        return ctx.db.removeMember(ctx.pool, { workspace: input.workspace, user: input.user, actor }, ctx.publish);
      }),
    /** Changes a member's role: only an owner makes or unmakes an owner; the last owner keeps theirs. */
    setRole: inWorkspace(PERMISSIONS["members.setRole"])
      .input(z.object({ user: z.string().min(1), role: roleInput }))
      .mutation(async ({ ctx, input }) => {
        const role = (await ctx.db.membership(ctx.pool, input.workspace, input.user))?.role;
        if (role === undefined) throw new TRPCError({ code: "NOT_FOUND", message: "no such member" });
        if ((role === "owner" || input.role === "owner") && ctx.role !== "owner") {
          throw new TRPCError({ code: "FORBIDDEN", message: "only an owner makes or unmakes an owner" });
        }
        const actor = `user:${ctx.user.id}` as const;
        return ctx.db.setMemberRole(ctx.pool, {
          workspace: input.workspace,
          user: input.user,
          role: input.role,
          actor,
        });
      }),
    /** An invitation link for `email`: mailed to them, and shown to the inviter (to copy). */
    invite: inWorkspace(PERMISSIONS["members.invite"])
      .input(
        z.object({
          email: z.string().email("an email address"),
          role: roleInput,
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
        const mail = invitationMail({
          to: invitation.email,
          workspace: (await ctx.db.readWorkspace(ctx.pool, input.workspace))?.name ?? input.workspace,
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
        await ctx.db.revokeInvitation(ctx.pool, input.workspace, input.id, `user:${ctx.user.id}`);
        return { id: input.id };
      }),
    leave: inWorkspace(PERMISSIONS["members.leave"]).mutation(async ({ ctx, input }) => {
      if (ctx.role === "owner" && (await ctx.db.countOwners(ctx.pool, input.workspace)) === 1) {
        throw new TRPCError({ code: "BAD_REQUEST", message: "the last owner cannot leave; make another owner first" });
      }
      const actor = `user:${ctx.user.id}` as const;
      return ctx.db.removeMember(ctx.pool, { workspace: input.workspace, user: ctx.user.id, actor }, ctx.publish);
    }),
  }),
  invitation: router({
    /** Joins the workspace of an invitation link, as the signed-in user with the invited email. */
    accept: authed
      .input(z.object({ token: z.string().min(1).max(100) }))
      .mutation(({ ctx, input }) => ctx.db.acceptInvitation(ctx.pool, input.token, ctx.user)),
  }),
  keys: router({
    list: inWorkspace(PERMISSIONS["keys.list"]).query(({ ctx, input }) => ctx.db.listKeys(ctx.pool, input.workspace)),
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
      .mutation(async ({ ctx, input }) =>
        ctx.db.revokeKey(ctx.pool, input.id, ctx.publish, input.workspace, `user:${ctx.user.id}`),
      ),
  }),
  connections: router({
    list: inWorkspace(PERMISSIONS["connections.list"]).query(async ({ ctx, input }) =>
      ctx.db.listConnections(ctx.pool, input.workspace),
    ),
    disconnect: inWorkspace(PERMISSIONS["connections.disconnect"])
      .input(z.object({ id: z.string().min(1) }))
      .mutation(async ({ ctx, input }) => {
        const actor = `user:${ctx.user.id}` as const;
        await ctx.db.disconnect(ctx.pool, { workspace: input.workspace, id: input.id, actor }, ctx.publish);
        return { id: input.id };
      }),
  }),
});

export type AppRouter = typeof appRouter;
