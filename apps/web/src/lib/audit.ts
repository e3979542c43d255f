// The audit page's shapes, shared by the procedure (server) and the page (browser): nothing here
// loads server code.

/** The spec's AuditEntry; a failed call's entry carries the error code in `detail.error` (the engine's). */
export interface AuditEntry {
  id: string;
  ts: number;
  group: string;
  primitive: string;
  primitive_id: string | null;
  instance: string | null;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown> | null;
}

/**
 * A control-plane entry's target as the actor it names (`key_…` → `key:key_…`, `user:<id>`,
 * `conn_…` → `oauth:conn_…`), or null: the page shows it by name.
 */
export function targetAsActor(e: AuditEntry): string | null {
  if (e.primitive !== "workspace" || e.target === null) return null;
  if (e.target.startsWith("key_")) return `key:${e.target}`;
  if (e.target.startsWith("user:")) return e.target;
  if (e.target.startsWith("conn_")) return `oauth:${e.target}`;
  return null;
}

/** How an actor reads (`@prim/db`'s `resolveActors`: the same shape). */
export interface ActorName {
  kind: "user" | "key" | "oauth" | "system" | "unknown";
  label: string;
  detail: string | null;
  gone: boolean;
}
