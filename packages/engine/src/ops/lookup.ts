import { type Manifest, PRIMITIVE_TYPES, type PrimitiveType, type ResolvedPrimitive, ServiceError } from "@prim/wire";
import { z } from "zod";
import { nameSchema } from "../core/names.js";
import { groupOp, untargetedOp } from "../primitives/operation.js";
import { findInGroup } from "./scope.js";

/**
 * Lookups a transport needs before it can name a target: the group of an MCP path, the
 * primitive a tool's `primitive` argument names. They are operations so that their scope rules
 * run inside `invoke` like every other rule, and a remote transport gets them over the wire.
 */

/**
 * The group named `name`, or null when there is none. A scoped principal asking for a group
 * other than its own gets 403 `group_mismatch` (as every group route answers); a missing group
 * is null for anyone, so that the caller may go on to `group.create` (which refuses scoped
 * principals itself).
 */
export const groupFind = untargetedOp({
  name: "group.find",
  access: "read",
  audited: false,
  metered: false,
  writesStorage: false,
  lookup: true,
  input: z.strictObject({ name: nameSchema }),
  async run(ctx, input): Promise<Manifest | null> {
    const group = await ctx.services.catalog.getGroup(input.name);
    if (group === null) return null;
    if (ctx.principal.groupId !== null && group.id !== ctx.principal.groupId) {
      throw new ServiceError("group_mismatch", `group '${input.name}' is outside this credential's scope`);
    }
    return { id: group.id, namespace: group.namespace, name: group.name, created_at: group.created_at };
  },
});

/**
 * The primitive `ref` names in the target group: an id, or a name (of `type` when given; for
 * any type the name must be unambiguous, else 400 asking for the id). Unknown, or in another
 * group: 404.
 */
export const primitiveResolve = groupOp({
  name: "primitive.resolve",
  access: "read",
  audited: false,
  metered: false,
  writesStorage: false,
  lookup: true,
  input: z.strictObject({ ref: z.string(), type: z.enum(PRIMITIVE_TYPES).optional() }),
  async run(ctx, input): Promise<ResolvedPrimitive> {
    const p = await findInGroup(ctx.services, ctx.group, input.ref, input.type);
    return { id: p.id, type: p.type as PrimitiveType, name: p.name };
  },
});
