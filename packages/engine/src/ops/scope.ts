import { notFound, type PrimitiveRef, type PrimitiveType, type Principal, ServiceError } from "@prim/wire";
import type { GroupRecord, PrimitiveRecord } from "../catalog/catalog.js";
import { isUlid } from "../core/ids.js";
import type { EngineServices } from "../primitives/services.js";

/** A principal of another workspace reaches nothing here (engine.ts refuses it earlier too). */
const otherWorkspace = (services: EngineServices, principal: Principal) => principal.workspace !== services.namespace;

function checkPrimitiveScope(
  services: EngineServices,
  principal: Principal,
  id: string | null,
  record: PrimitiveRecord | null,
): PrimitiveRecord {
  if (
    record === null ||
    otherWorkspace(services, principal) ||
    (principal.groupId !== null && record.group_id !== principal.groupId)
  ) {
    throw notFound(`primitive '${id ?? ""}'`);
  }
  return record;
}

/**
 * A primitive the principal may reach, looked up in this engine's own catalog view only; one
 * outside its group or workspace is reported as missing. Answers
 * synchronously when the catalog holds the record in memory (every hot request).
 */
export function resolvePrimitive(
  services: EngineServices,
  principal: Principal,
  id: string | null,
): PrimitiveRecord | Promise<PrimitiveRecord> {
  if (id === null || !isUlid(id)) return checkPrimitiveScope(services, principal, id, null);
  const cached = services.catalog.cachedPrimitive?.(id);
  if (cached !== undefined) return checkPrimitiveScope(services, principal, id, cached);
  return services.catalog.getPrimitive(id).then((record) => checkPrimitiveScope(services, principal, id, record));
}

/** A group the principal may reach; another group answers 403 `group_mismatch`. */
export async function resolveGroup(
  services: EngineServices,
  principal: Principal,
  idOrName: string | null,
): Promise<GroupRecord> {
  if (otherWorkspace(services, principal)) throw notFound(`group '${idOrName ?? ""}'`);
  const group = idOrName === null ? null : await services.catalog.getGroup(idOrName);
  if (principal.groupId !== null && group?.id !== principal.groupId) {
    throw new ServiceError("group_mismatch", `group '${idOrName ?? ""}' is outside this credential's scope`);
  }
  if (group === null) throw notFound(`group '${idOrName ?? ""}'`);
  return group;
}

/**
 * The primitive `ref` names in `group`: an id, or a name (of `type` when given; for any type the
 * name must be unambiguous, else 400 asking for the id). Unknown, or in another group: 404.
 */
export async function findInGroup(
  services: EngineServices,
  group: GroupRecord,
  ref: string,
  type: PrimitiveType | undefined,
): Promise<PrimitiveRecord> {
  const { catalog } = services;
  if (isUlid(ref)) {
    const record = catalog.cachedPrimitive?.(ref) ?? (await catalog.getPrimitive(ref));
    if (record != null && record.group_id === group.id) return record;
    throw notFound(`primitive '${ref}' in group '${group.name}'`);
  }
  const matches = await catalog.primitivesNamed(group.id, ref, type);
  if (matches.length === 1) return matches[0] as PrimitiveRecord;
  if (matches.length === 0) throw notFound(`${type ?? "primitive"} '${ref}' in group '${group.name}'`);
  throw new ServiceError(
    "invalid_request",
    `primitive: '${ref}' names ${matches.length} primitives (${matches.map((m) => m.type).join(", ")}); pass its id`,
  );
}

/** A primitive named by reference (a group the principal reaches, then an id or name in it). */
export async function resolvePrimitiveRef(
  services: EngineServices,
  principal: Principal,
  target: PrimitiveRef,
): Promise<PrimitiveRecord> {
  const group = await resolveGroup(services, principal, target.group);
  const record = await findInGroup(services, group, target.ref, target.type);
  return checkPrimitiveScope(services, principal, record.id, record);
}
