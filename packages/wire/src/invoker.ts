import type { Principal } from "./principal.js";
import type { Manifest, Target } from "./types.js";

export interface InvokeMeta {
  requestId?: string;
  /** Aborted when the caller has gone away (ends a long poll early). */
  signal?: AbortSignal;
  /**
   * Audit the call even if the operation is an unaudited read. A transport asks for it: the MCP
   * server sets it on every tool call, so that an agent's reads leave a trail too.
   */
  audit?: boolean;
  /** The caller's address (limits per client IP: signed URLs in the cloud). */
  clientIp?: string;
  /**
   * How many cells this call has already been forwarded through (the cloud's scale-out): a cell
   * that does not serve the workspace forwards it once more at most, then refuses.
   */
  hops?: number;
  /**
   * A service of the platform acting for the workspace in the same process (the webhook
   * dispatcher reading change feeds): neither limited, counted nor audited — what it does for
   * the workspace is counted its own way (a delivery is one operation). Never taken from a
   * request: transports do not set it and the internal invoke's schema does not carry it.
   */
  system?: boolean;
  /** Receives the limiter's response headers (`RateLimit-Policy`, `RateLimit`) when it admits the call. */
  onLimits?: (headers: Record<string, string>) => void;
}

/**
 * The one door to data: `invoke(principal, op, target, input, meta)`. The engine implements it in
 * process; `RemoteInvoker` (remote-invoker.ts) calls an engine's internal endpoint over HTTP.
 * Transports (MCP, REST) depend on this interface only, never on an engine's services.
 */
export interface Invoker {
  invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: Target,
    input: unknown,
    meta?: InvokeMeta,
  ): Promise<O>;
}

/**
 * The group `name`, created first if it does not exist (MCP's `/mcp/<group>` paths and
 * `prim mcp --group`). Both steps are operations, so the rules are the engine's: a scoped
 * principal naming another group's path gets 403 `group_mismatch`, and only an account-level
 * caller may create (403 `forbidden`); the creation is audited as `group.create`.
 */
export async function openGroup(invoker: Invoker, principal: Principal, name: string): Promise<Manifest> {
  const existing = await invoker.invoke<Manifest | null>(principal, "group.find", null, { name });
  if (existing !== null) return existing;
  try {
    const { id, namespace, created_at } = await invoker.invoke<Manifest>(principal, "group.create", null, { name });
    return { id, namespace, name, created_at }; // the manifest, as group.find answers it
  } catch (err) {
    // Two first uses at once: the other one created it.
    const raced = await invoker.invoke<Manifest | null>(principal, "group.find", null, { name });
    if (raced !== null) return raced;
    throw err;
  }
}
