import type { AnyOperation } from "@prim/engine";

/**
 * Which calls the plan caps concern (spec: Enforcement). Metering itself is each operation's
 * own `metered` flag, declared beside it in the engine.
 */

/** Refused at the Starter storage cap (spec, Enforcement 2); reads and deletes keep working. */
const STORAGE_WRITES: ReadonlySet<string> = new Set([
  "db.exec",
  "db.batch",
  "fs.write",
  "queue.send",
  "queue.publish",
  "memory.remember",
  "vault.put",
  "kv.set",
  "kv.mset",
  "kv.incr",
  "storage.put",
  "storage.copy",
  "primitive.create",
  "group.import",
]);

/** Features Starter does not have (spec, Enforcement 4): 403 `plan_limit`. */
const STARTER_FEATURES: ReadonlySet<string> = new Set([
  "primitive.snapshot",
  "primitive.restore",
  "primitive.fork",
  "group.export",
  "group.import",
  "audit.list",
  "audit.group",
  "audit.primitive",
]);

export function isStorageWrite(op: AnyOperation, input: unknown): boolean {
  // An upload through a signed URL is a write; its downloads are reads.
  if (op.name === "storage.signed") return (input as { method?: unknown } | null)?.method === "PUT";
  return STORAGE_WRITES.has(op.name);
}

export function isStarterFeature(op: AnyOperation): boolean {
  return STARTER_FEATURES.has(op.name);
}

/**
 * Lookups a transport makes before the call they serve (MCP resolves a primitive by name, then
 * calls it): neither limited nor counted, so one tool call takes one token.
 */
const LOOKUPS: ReadonlySet<string> = new Set(["primitive.resolve", "group.find"]);

export function isLookup(op: AnyOperation): boolean {
  return LOOKUPS.has(op.name);
}
