import type { Principal, Target } from "@prim/wire";
import type { AnyOperation } from "./primitives/operation.js";

/** One call as the limiter sees it: who, which operation, on what, from where. */
export interface LimitCall {
  principal: Principal;
  op: AnyOperation;
  /** The target as the caller named it (a primitive id, a group, a reference), before any lookup. */
  target: Target;
  /** The call's input as sent (before validation): a signed URL's method, for example. */
  input: unknown;
  /** The caller's address, for limits per client IP (signed URLs). */
  clientIp?: string | undefined;
}

/**
 * Rate limits, metering and plan caps (spec: Limits, Plans, Enforcement; CLOUD.md: "Limits and
 * metering"), asked by `engine.invoke` — the one policy point — before a call touches anything.
 * `admit` either throws the refusal (a ServiceError: 429 `rate_limited` with `Retry-After`,
 * 429 or 403 `plan_limit`) or answers the headers the response carries (`RateLimit-Policy`,
 * `RateLimit`). The local engine has none: nothing is limited or counted.
 */
export interface Limiter {
  /** May answer synchronously (a cloud call spending a leased token makes no Redis round trip). */
  admit(call: LimitCall): Record<string, string> | undefined | Promise<Record<string, string> | undefined>;
  /**
   * An admitted call's primitive, once resolved (by id or reference): the cloud counts the
   * call's operations per primitive here, in memory, off the Redis round trip. Synchronous.
   */
  resolved?(call: LimitCall, primitiveId: string): void;
}
