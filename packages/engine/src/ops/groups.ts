import { type GroupInfo, type Manifest, ServiceError } from "@prim/wire";
import { z } from "zod";
import { allPrimitivesOf, type GroupRecord } from "../catalog/catalog.js";
import { prefixedId } from "../core/ids.js";
import { groupNameSchema } from "../core/names.js";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, queryBoolean, toPage } from "../core/pagination.js";
import { groupOp, untargetedOp } from "../primitives/operation.js";
import { type EngineServices, primitiveInfo } from "../primitives/services.js";
import { removePrimitive } from "./primitives.js";

function manifest(g: GroupRecord): Manifest {
  return { id: g.id, namespace: g.namespace, name: g.name, created_at: g.created_at };
}

const allPrimitives = (services: EngineServices, groupId: string) => allPrimitivesOf(services.catalog, groupId);

export async function groupInfo(services: EngineServices, g: GroupRecord): Promise<GroupInfo> {
  const primitives = await allPrimitives(services, g.id);
  return { ...manifest(g), primitives: primitives.map((p) => primitiveInfo(services, p)) };
}

/** A new group's record (not yet in the catalog). */
export function newGroupRecord(services: EngineServices, name: string): GroupRecord {
  const now = services.clock.now();
  return { id: prefixedId("grp", now), name, namespace: services.namespace, created_at: now };
}

export const groupCreate = untargetedOp({
  name: "group.create",
  access: "write",
  destructive: false,
  idempotent: false,
  accountOnly: true,
  audited: true,
  metered: false,
  writesStorage: false,
  input: z.strictObject({ name: groupNameSchema }),
  async run(ctx, input): Promise<GroupInfo> {
    const { services } = ctx;
    const group = newGroupRecord(services, input.name);
    await services.catalog.createGroup(group);
    ctx.audit.group = group.name;
    ctx.audit.target = group.name;
    return { ...manifest(group), primitives: [] };
  },
});

export const groupList = untargetedOp({
  name: "group.list",
  access: "read",
  accountOnly: true,
  audited: false,
  metered: false,
  writesStorage: false,
  input: z.strictObject({ limit: limitSchema(LIST_PAGE), cursor: z.string().optional() }),
  async run(ctx, input): Promise<Page<Manifest>> {
    const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, z.object({ n: z.string() })).n;
    const rows = await ctx.services.catalog.listGroups({ after, limit: input.limit + 1 });
    return toPage(rows, input.limit, manifest, (g) => ({ n: g.name }));
  },
});

export const groupGet = groupOp({
  name: "group.get",
  access: "read",
  audited: false,
  metered: false,
  writesStorage: false,
  input: z.strictObject({}),
  run: (ctx) => groupInfo(ctx.services, ctx.group),
});

export const groupDelete = groupOp({
  name: "group.delete",
  access: "write",
  destructive: true,
  idempotent: true,
  accountOnly: true,
  audited: true,
  metered: false,
  writesStorage: false,
  input: z.strictObject({ force: queryBoolean.default(false) }),
  async run(ctx, input): Promise<void> {
    const { services, group } = ctx;
    ctx.audit.target = group.name;
    const primitives = await allPrimitives(services, group.id);
    if (primitives.length > 0 && !input.force) {
      throw new ServiceError(
        "conflict",
        `group '${group.name}' has ${primitives.length} primitive(s); delete them first or pass force=true`,
      );
    }
    // Catalog rows go first: once they are gone nothing can reach the files.
    await services.catalog.deleteGroup(group.id);
    for (const p of primitives) await removePrimitive(services, p.id);
    ctx.audit.detail = { primitives_deleted: primitives.length };
  },
});
