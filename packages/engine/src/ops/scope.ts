import type { GroupRecord, PrimitiveRecord } from "../catalog/catalog.js";
import { notFound, ServiceError } from "../core/errors.js";
import { isUlid } from "../core/ids.js";
import type { Principal } from "../core/principal.js";
import type { EngineServices } from "../engine-services.js";

/** A primitive the principal may reach; one outside its group is reported as missing. */
export async function resolvePrimitive(
  services: EngineServices,
  principal: Principal,
  id: string | null,
): Promise<PrimitiveRecord> {
  const record = id !== null && isUlid(id) ? await services.catalog.getPrimitive(id) : null;
  if (record === null || (principal.groupId !== null && record.group_id !== principal.groupId)) {
    throw notFound(`primitive '${id ?? ""}'`);
  }
  return record;
}

/** A group the principal may reach; another group answers 403 `group_mismatch`. */
export async function resolveGroup(
  services: EngineServices,
  principal: Principal,
  idOrName: string | null,
): Promise<GroupRecord> {
  const group = idOrName === null ? null : await services.catalog.getGroup(idOrName);
  if (principal.groupId !== null && group?.id !== principal.groupId) {
    throw new ServiceError("group_mismatch", `group '${idOrName ?? ""}' is outside this credential's scope`);
  }
  if (group === null) throw notFound(`group '${idOrName ?? ""}'`);
  return group;
}
