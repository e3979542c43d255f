import type * as PrimBilling from "@prim/billing";
import type * as PrimDb from "@prim/db";
import type { Invoker, Principal } from "@prim/wire";
import { initTRPC, TRPCError } from "@trpc/server";
import type pg from "pg";
import superjson from "superjson";
import { z } from "zod";
import type { CellCalls } from "../cell";
import { PERMISSIONS, type Permission } from "./permissions";

/** What a procedure runs with: the signed-in user (or null) and the control plane. */
export interface Context {
  user: { id: string; email: string } | null;
  pool: pg.Pool;
  /** @prim/db (loaded at run time in the app, directly in tests). */
  db: typeof PrimDb;
  /** The revocation fan-out (`prim:revoked`): a key's hash or `grant:<id>`. */
  publish: (message: string) => Promise<void>;
  /** The one door to data (the cell's internal invoke): policy and audit are the engine's. */
  invoker: Invoker;
  /** The cell's other internal routes (creating a webhook endpoint: cell.ts). */
  cell: CellCalls;
  /** This dashboard's origin (invitation links). */
  dashboardUrl: string;
  /** Sends one plain-text mail (`SMTP_URL`; invitations). */
  mail: (mail: { to: string; subject: string; text: string }) => Promise<void>;
  /** The REST API's public origin (signed URLs are paths under it). */
  apiUrl: string;
  /** The MCP endpoint of this deployment (`PRIM_PUBLIC_MCP_URL` + `/mcp`): the Connect dialog's. */
  mcpUrl: string;
  /** The live operation count of a UTC month from Redis, or null when it does not answer. */
  operations: (workspace: string, month: PrimDb.UsageMonth) => Promise<number | null>;
  /** Stripe billing (with `STRIPE_SECRET_KEY`), else null: the billing page says it is off. */
  billing: { stripe: PrimBilling.Stripe; lib: typeof PrimBilling } | null;
}

/**
 * The dashboard user as the engine sees them in a workspace (actor `user:<id>`): owners and
 * admins are account-level; members reach every group's data but no account-only operation
 * (lifecycle, groups, audit, secrets); billing reaches no data.
 */
export function userPrincipal(user: { id: string }, workspace: string, role: Role): Principal {
  const actor = `user:${user.id}`;
  if (role === "owner" || role === "admin") return { kind: "account", workspace, actor, groupId: null, tools: null };
  return { kind: "scoped", workspace, actor, groupId: null, tools: role === "member" ? null : [] };
}

/** A member's role: @prim/db's, the one declaration. */
export type Role = PrimDb.Role;

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  // Input validation (the same zod schemas the forms use) answers its messages, per field.
  // An engine's refusal keeps its spec code (`data.error`: `wrong_type`, `fs_conflict`, …) for the
  // pages to show.
  errorFormatter({ shape, error }) {
    if (!(error.cause instanceof z.ZodError)) {
      const code = (error.cause as { code?: unknown } | undefined)?.code;
      return typeof code === "string" && code in CODES ? { ...shape, data: { ...shape.data, error: code } } : shape;
    }
    const fields = error.cause.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`);
    return {
      ...shape,
      message: fields.join("; "),
      data: { ...shape.data, fields: z.flattenError(error.cause).fieldErrors },
    };
  },
});

/** The spec's error codes (ServiceError) as tRPC's, with the message kept. */
const CODES: Record<string, TRPCError["code"]> = {
  not_found: "NOT_FOUND",
  forbidden: "FORBIDDEN",
  invalid_request: "BAD_REQUEST",
  wrong_type: "BAD_REQUEST",
  already_exists: "CONFLICT",
  group_mismatch: "FORBIDDEN",
  tool_not_allowed: "FORBIDDEN",
  secret_policy_denied: "FORBIDDEN",
  plan_limit: "FORBIDDEN",
  rate_limited: "TOO_MANY_REQUESTS",
  conflict: "CONFLICT",
  branch_conflict: "CONFLICT",
  fs_conflict: "CONFLICT",
  lease_expired: "CONFLICT",
  secret_grant_expired: "CONFLICT",
  paused: "CONFLICT",
  precondition_failed: "PRECONDITION_FAILED",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  range_not_satisfiable: "BAD_REQUEST",
  upstream_error: "BAD_GATEWAY",
};

const serviceErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause as { code?: string; message?: string } | undefined;
    const code = cause?.code === undefined ? undefined : CODES[cause.code];
    if (code !== undefined) throw new TRPCError({ code, message: cause?.message ?? code, cause: result.error.cause });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Signed in. */
export const authed = t.procedure.use(serviceErrors).use(({ ctx, next }) => {
  if (ctx.user === null) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  return next({ ctx: { ...ctx, user: ctx.user } });
});

const workspaceInput = z.object({ workspace: z.string().min(1).max(64) });

/**
 * A procedure on the input's workspace for `permission` (PERMISSIONS names its roles), checked
 * on the server for every call: not a member is NOT_FOUND (nothing learned about the
 * workspace), another role FORBIDDEN. The context then carries the caller's `role`, the
 * workspace's `plan`, `actor`
 * (`user:<id>`, the control plane's audit actor) and `principal` (the engine's view of them in
 * this workspace, for every `invoker.invoke`).
 */
export function workspaceProcedure(permission: Permission) {
  const roles: readonly Role[] = PERMISSIONS[permission];
  return authed.input(workspaceInput).use(async ({ ctx, input, next }) => {
    const member = await ctx.db.membership(ctx.pool, input.workspace, ctx.user.id);
    if (member === null)
      throw new TRPCError({ code: "NOT_FOUND", message: `workspace '${input.workspace}' not found` });
    const role = member.role;
    if (!roles.includes(role)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `role '${role}' may not do this (needs ${roles.join(" or ")})`,
      });
    }
    const actor = `user:${ctx.user.id}` as const;
    return next({
      ctx: { ...ctx, role, plan: member.plan, actor, principal: userPrincipal(ctx.user, input.workspace, role) },
    });
  });
}
