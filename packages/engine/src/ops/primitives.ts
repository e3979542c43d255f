import { DURABILITIES, invalid, PRIMITIVE_TYPES, type PrimitiveInfo, type PrimitiveStats, READ_TOOL } from "@prim/wire";
import { z } from "zod";
import type { GroupRecord, PrimitiveRecord } from "../catalog/catalog.js";
import { ulid } from "../core/ids.js";
import { primitiveNameSchema } from "../core/names.js";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, toPage } from "../core/pagination.js";
import { primitiveOp, untargetedOp } from "../primitives/operation.js";
import { type EngineServices, primitiveInfo } from "../primitives/services.js";
import { resolveGroup } from "./scope.js";

const typeSchema = z.enum(PRIMITIVE_TYPES, { error: `must be one of ${PRIMITIVE_TYPES.join(", ")}` });

export const primitiveCreate = untargetedOp({
  name: "primitive.create",
  access: "write",
  destructive: false,
  idempotent: false,
  tool: "primitive_create",
  audited: true,
  metered: false,
  writesStorage: true,
  input: z.strictObject({ name: primitiveNameSchema, type: typeSchema, group: z.string().min(1) }),
  async run(ctx, input): Promise<PrimitiveInfo> {
    const { services } = ctx;
    const group = await resolveGroup(services, ctx.principal, input.group);
    ctx.audit.group = group.name;
    if (services.files.definition(input.type) === undefined) {
      throw invalid(`type: ${input.type} primitives are not available in this engine yet`);
    }
    const record = newPrimitiveRecord(services, group, { name: input.name, type: input.type, forked_from: null });
    // The file exists (with the type's tables) before the catalog row makes it reachable.
    services.files.handle(record.id, record.type);
    try {
      await services.catalog.createPrimitive(record);
    } catch (err) {
      await services.files.remove(record.id);
      throw err;
    }
    ctx.audit.subject = { id: record.id, type: record.type, name: record.name, group: group.name };
    return primitiveInfo(services, record);
  },
});

export const primitiveList = untargetedOp({
  name: "primitive.list",
  access: "read",
  audited: false,
  metered: false,
  writesStorage: false,
  input: z.strictObject({
    type: typeSchema.optional(),
    group: z.string().min(1).optional(),
    limit: limitSchema(LIST_PAGE),
    cursor: z.string().optional(),
  }),
  async run(ctx, input): Promise<Page<PrimitiveInfo>> {
    const { services, principal } = ctx;
    // A scoped principal lists only its own group.
    const group = input.group === undefined ? undefined : await resolveGroup(services, principal, input.group);
    if (group !== undefined) ctx.audit.group = group.name; // for a transport that audits every call (MCP)
    const groupId = group?.id ?? principal.groupId ?? undefined;
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, z.object({ i: z.string() })).i;
    const rows = await services.catalog.listPrimitives({ groupId, type: input.type, after, limit: input.limit + 1 });
    return toPage(
      rows,
      input.limit,
      (p) => primitiveInfo(services, p),
      (p) => ({ i: p.id }),
    );
  },
});

export const primitiveGet = primitiveOp({
  name: "primitive.get",
  access: "read",
  audited: false,
  metered: false,
  writesStorage: false,
  input: z.strictObject({}),
  run: (ctx): PrimitiveInfo => primitiveInfo(ctx.services, ctx.primitive),
});

export const primitiveUpdate = primitiveOp({
  name: "primitive.update",
  access: "write",
  destructive: false,
  idempotent: true,
  accountOnly: true,
  audited: true,
  metered: false,
  writesStorage: false,
  input: z.strictObject({
    name: primitiveNameSchema.optional(),
    group: z.string().min(1).optional(),
    // null: back to the engine's setting.
    durability: z.enum(DURABILITIES, { error: `must be one of ${DURABILITIES.join(", ")}, or null` }).nullish(),
  }),
  async run(ctx, input): Promise<PrimitiveInfo> {
    const { services, primitive } = ctx;
    const group = input.group === undefined ? null : await resolveGroup(services, ctx.principal, input.group);
    const patch = { name: input.name, group_id: group?.id, durability: input.durability };
    await services.catalog.updatePrimitive(primitive.id, patch);
    if (group !== null && group.id !== primitive.group_id) {
      services.files.moved(primitive.id, primitive.type, { fromGroupId: primitive.group_id, toGroupId: group.id });
    }
    const updated = (await services.catalog.getPrimitive(primitive.id)) as PrimitiveRecord;
    ctx.audit.detail = {
      from: { name: primitive.name, group: primitive.group },
      to: { name: updated.name, group: updated.group },
    };
    if (input.durability !== undefined) {
      const { files } = services;
      ctx.audit.detail.durability = {
        from: files.durabilityOf(primitive),
        to: files.durabilityOf(updated),
        own: updated.durability,
      };
    }
    return primitiveInfo(services, updated);
  },
});

/** A new primitive's record in `group` (not yet in the catalog): a fresh id, active. */
export function newPrimitiveRecord(
  services: EngineServices,
  group: GroupRecord,
  fields: Pick<PrimitiveRecord, "name" | "type" | "forked_from">,
): PrimitiveRecord {
  const now = services.clock.now();
  const record = { id: ulid(now), ...fields, group_id: group.id, group: group.name, created_at: now };
  return { ...record, paused: false, durability: null };
}

/** Deletes a primitive's row, snapshots and files; its blobs go with the next collection. */
export async function removePrimitive(services: EngineServices, id: string): Promise<void> {
  await services.catalog.deletePrimitive(id);
  await services.catalog.deleteSnapshots(id);
  await services.files.remove(id);
  services.blobCollector.schedule();
}

export const primitiveDelete = primitiveOp({
  name: "primitive.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  accountOnly: true,
  audited: true,
  metered: false,
  writesStorage: false,
  // Its files or objects are gone (the engine publishes for fs and storage only).
  changes: () => [{ path: "", subtree: true }],
  input: z.strictObject({}),
  async run(ctx): Promise<void> {
    await removePrimitive(ctx.services, ctx.primitive.id);
  },
});

export const primitiveStats = primitiveOp({
  name: "primitive.stats",
  access: "read",
  tool: (p) => READ_TOOL[p.type],
  audited: true,
  metered: true,
  writesStorage: false,
  input: z.strictObject({}),
  async run(ctx): Promise<PrimitiveStats> {
    const { services, primitive: p } = ctx;
    return {
      id: p.id,
      name: p.name,
      type: p.type,
      size_bytes: services.files.sizeBytes(p.id, p.type),
      items: await services.files.items(p.id, p.type),
      paused: p.paused,
      durability: services.files.durabilityOf(p),
    };
  },
});
