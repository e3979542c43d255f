import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { invitationMail } from "../../mail-messages";
import { authed, type Role, router, workspaceProcedure } from "../init";

/** A role as input: @prim/db's `ROLES`, its values written here (this module does not load @prim/db) and checked against its type. */
const roleInput = z.enum(["owner", "admin", "member", "billing"] as const satisfies readonly Role[]);

/** Members and invitations: only an owner makes, unmakes or removes an owner; the last owner stays. */
export const membersRouter = router({
  list: workspaceProcedure("members.list").query(({ ctx, input }) => ctx.db.listMembers(ctx.pool, input.workspace)),
  remove: workspaceProcedure("members.remove")
    .input(z.object({ user: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => {
      if (input.user === ctx.user.id) throw new TRPCError({ code: "BAD_REQUEST", message: "to leave, use leave" });
      const role = (await ctx.db.membership(ctx.pool, input.workspace, input.user))?.role;
      if (role === undefined) throw new TRPCError({ code: "NOT_FOUND", message: "no such member" });
      if (role === "owner" && ctx.role !== "owner") {
        throw new TRPCError({ code: "FORBIDDEN", message: "only an owner removes an owner" });
      }
      // Removal ends that user's OAuth connections here at once (their tokens answer 401).
      return ctx.db.removeMember(
        ctx.pool,
        { workspace: input.workspace, user: input.user, actor: ctx.actor },
        ctx.publish,
      );
    }),
  /** Changes a member's role: only an owner makes or unmakes an owner; the last owner keeps theirs. */
  setRole: workspaceProcedure("members.setRole")
    .input(z.object({ user: z.string().min(1), role: roleInput }))
    .mutation(async ({ ctx, input }) => {
      const role = (await ctx.db.membership(ctx.pool, input.workspace, input.user))?.role;
      if (role === undefined) throw new TRPCError({ code: "NOT_FOUND", message: "no such member" });
      if ((role === "owner" || input.role === "owner") && ctx.role !== "owner") {
        throw new TRPCError({ code: "FORBIDDEN", message: "only an owner makes or unmakes an owner" });
      }
      return ctx.db.setMemberRole(ctx.pool, {
        workspace: input.workspace,
        user: input.user,
        role: input.role,
        actor: ctx.actor,
      });
    }),
  /** An invitation link for `email`: mailed to them, and shown to the inviter (to copy). */
  invite: workspaceProcedure("members.invite")
    .input(z.object({ email: z.string().email("an email address"), role: roleInput }))
    .mutation(async ({ ctx, input }) => {
      if (input.role === "owner" && ctx.role !== "owner") {
        throw new TRPCError({ code: "FORBIDDEN", message: "only an owner invites an owner" });
      }
      const made = await ctx.db.inviteMember(ctx.pool, {
        workspace: input.workspace,
        email: input.email,
        role: input.role,
        invitedBy: ctx.actor,
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
  invitations: workspaceProcedure("members.invitations").query(({ ctx, input }) =>
    ctx.db.listInvitations(ctx.pool, input.workspace),
  ),
  revokeInvitation: workspaceProcedure("members.revokeInvitation")
    .input(z.object({ id: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => {
      await ctx.db.revokeInvitation(ctx.pool, input.workspace, input.id, ctx.actor);
      return { id: input.id };
    }),
  leave: workspaceProcedure("members.leave").mutation(async ({ ctx, input }) => {
    if (ctx.role === "owner" && (await ctx.db.countOwners(ctx.pool, input.workspace)) === 1) {
      throw new TRPCError({ code: "BAD_REQUEST", message: "the last owner cannot leave; make another owner first" });
    }
    return ctx.db.removeMember(
      ctx.pool,
      { workspace: input.workspace, user: ctx.user.id, actor: ctx.actor },
      ctx.publish,
    );
  }),
});

/** The invitee's side (signed in, not yet a member): joining through an invitation link. */
export const invitationRouter = router({
  /** Joins the workspace of an invitation link, as the signed-in user with the invited email. */
  accept: authed
    .input(z.object({ token: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) => ctx.db.acceptInvitation(ctx.pool, input.token, ctx.user)),
});
