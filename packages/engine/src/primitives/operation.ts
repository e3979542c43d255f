import type { z } from "zod";
import type { GroupRecord, PrimitiveRecord } from "../catalog/catalog.js";
import type { Principal } from "../core/principal.js";
import type { PrimitiveType } from "../core/types.js";
import type { EngineServices } from "./services.js";

/** What an operation's handler may set on its audit entry. */
export interface AuditNote {
  target: string | null;
  detail: Record<string, unknown> | null;
  /** The primitive the entry concerns when it is not the call's target (e.g. a create). */
  subject?: { id: string; type: PrimitiveType; name: string; group: string };
}

export interface OpContext<S = unknown> {
  principal: Principal;
  services: EngineServices;
  /** Resolved target: set for `target: "primitive"` operations. */
  primitive: PrimitiveRecord;
  /** Resolved target: set for `target: "group"` operations. */
  group: GroupRecord;
  /** The type's store over the primitive's open file (data operations). */
  store: S;
  audit: AuditNote;
  requestId: string | undefined;
  /** Aborted when the caller goes away (a long poll stops waiting). */
  signal?: AbortSignal | undefined;
}

/**
 * One operation, declared once: REST routes and MCP tools are thin mappings onto it, and all
 * policy (scope, allowlist, paused, audit) runs around it in `engine.invoke`.
 */
export interface Operation<I = unknown, O = unknown, S = unknown> {
  /** Also the audit action: `kv.set`, `group.create`. */
  name: string;
  /** What `invoke`'s target argument names. */
  target: "primitive" | "group" | "none";
  /** For data operations: the primitive type the route applies to (else 400 `wrong_type`). */
  type?: PrimitiveType;
  /**
   * Allowlist tool required of a scoped principal: one name, any of several (`db_query` or
   * `db_exec`), or a function of the target primitive (stats, export: the type's read tool);
   * absent = any principal reaching the group.
   */
  tool?: string | readonly string[] | ((primitive: PrimitiveRecord) => string | undefined);
  /** Rejects scoped principals with 403 `forbidden`. */
  accountOnly?: boolean;
  /** Refused with 423 while the primitive is paused; defaults to true for data routes (`type` set). */
  refusedWhilePaused?: boolean;
  /** Whether the call leaves an audit entry (data and lifecycle calls). */
  audited: boolean;
  /**
   * Whether the call counts as a metered operation (spec: "What counts as an operation"). The
   * local engine meters nothing, so nothing here reads it: it is the cloud's metering flag
   * (CLOUD.md, "Limits and metering"), declared beside each operation so the classification is
   * written and reviewed where the operation is, not in a list the cloud would have to keep.
   */
  metered: boolean;
  input: z.ZodType<I>;
  run(ctx: OpContext<S>, input: I): O | Promise<O>;
}

export type AnyOperation = Operation<any, any, any>;

/** What every data operation of a primitive type shares: its target, type, audit and metering. */
export function dataOp<T extends PrimitiveType>(type: T) {
  return { target: "primitive", type, audited: true, metered: true } as const;
}

/** Identity helper that infers I and O from the schema and handler. */
export function defineOp<I, O, S = unknown>(op: Operation<I, O, S>): Operation<I, O, S> {
  return op;
}
