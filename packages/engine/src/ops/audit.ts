import { type AuditEntry, invalid, PRIMITIVE_TYPES } from "@prim/wire";
import { z } from "zod";
import type { AuditFilter, AuditRecord } from "../catalog/catalog.js";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, toPage } from "../core/pagination.js";
import { groupOp, type OpContext, primitiveOp, untargetedOp } from "../primitives/operation.js";

/** `workspace`: the cloud's control-plane entries (CLOUD.md: "Audit of the control plane"). */
const AUDIT_TYPES = ["group", "workspace", ...PRIMITIVE_TYPES] as const;
const msSchema = z.coerce.number().int("must be an integer (ms since the epoch)").min(0);

const filterSchema = z.strictObject({
  group: z.string().min(1).optional(),
  type: z.enum(AUDIT_TYPES, { error: `must be one of ${AUDIT_TYPES.join(", ")}` }).optional(),
  primitive: z.string().min(1).optional(),
  action: z.string().min(1).optional(),
  actor: z.string().min(1).optional(),
  since: msSchema.optional(),
  until: msSchema.optional(),
  limit: limitSchema(LIST_PAGE),
  cursor: z.string().optional(),
});

type FilterInput = z.infer<typeof filterSchema>;

/** Newest first; the cursor is the last entry's position in the trail. */
async function listAudit(ctx: OpContext, input: FilterInput, scope: Partial<AuditFilter>): Promise<Page<AuditEntry>> {
  if (input.since !== undefined && input.until !== undefined && input.since > input.until) {
    throw invalid("since: must not be after until");
  }
  const { cursor, limit, ...filters } = input;
  const beforeSeq = cursor === undefined ? undefined : decodeCursor(cursor, z.object({ s: z.number().int() })).s;
  // Entries still in the write buffer belong to the trail too.
  await ctx.services.audit.flush();
  const rows = await ctx.services.catalog.listAudit({ ...filters, ...scope, beforeSeq, limit: limit + 1 });
  return toPage(
    rows,
    limit,
    ({ seq: _seq, ...entry }: AuditRecord) => entry,
    (r) => ({ s: r.seq }),
  );
}

/** A path's group or primitive narrows the filters; a filter naming another one finds nothing. */
function narrowed(scoped: string, given: string | undefined): string {
  return given === undefined || given === scoped ? scoped : "\u0000none";
}

/** `GET /audit`: the whole trail (account only). Audit reads are neither audited nor metered. */
export const auditList = untargetedOp({
  name: "audit.list",
  access: "read",
  accountOnly: true,
  audited: false,
  metered: false,
  writesStorage: false,
  planFeature: true,
  input: filterSchema,
  async run(ctx, input): Promise<Page<AuditEntry>> {
    // `group` may name a group by id too.
    const group = input.group === undefined ? undefined : await ctx.services.catalog.getGroup(input.group);
    return listAudit(ctx, input, input.group === undefined ? {} : { group: group?.name ?? input.group });
  },
});

export const auditGroup = groupOp({
  name: "audit.group",
  access: "read",
  accountOnly: true,
  audited: false,
  metered: false,
  writesStorage: false,
  planFeature: true,
  input: filterSchema,
  run(ctx, input): Promise<Page<AuditEntry>> {
    const given = input.group === undefined ? undefined : input.group === ctx.group.id ? ctx.group.name : input.group;
    return listAudit(ctx, input, { group: narrowed(ctx.group.name, given) });
  },
});

/** Works while the primitive is paused (a lifecycle route, not a data route). */
export const auditPrimitive = primitiveOp({
  name: "audit.primitive",
  access: "read",
  accountOnly: true,
  audited: false,
  metered: false,
  writesStorage: false,
  planFeature: true,
  input: filterSchema,
  run(ctx, input): Promise<Page<AuditEntry>> {
    return listAudit(ctx, input, { primitive: narrowed(ctx.primitive.id, input.primitive) });
  },
});
