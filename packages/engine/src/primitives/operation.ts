import type { OperationName, OperationResult, PrimitiveType, Principal } from "@prim/wire";
import type { z } from "zod";
import type { GroupRecord, PrimitiveRecord } from "../catalog/catalog.js";
import type { EngineServices } from "./services.js";

/** What an operation's handler may set on its audit entry. */
export interface AuditNote {
  target: string | null;
  detail: Record<string, unknown> | null;
  /** The primitive the entry concerns when it is not the call's target (e.g. a create). */
  subject?: { id: string; type: PrimitiveType; name: string; group: string };
  /**
   * The group (name) the entry belongs to when the call has no target (a create): set as soon
   * as it is known, so a call that fails after it is still audited there.
   */
  group?: string;
}

/** What every operation's handler gets. */
export interface OpContext {
  principal: Principal;
  services: EngineServices;
  audit: AuditNote;
  requestId: string | undefined;
  /** Aborted when the caller goes away (a long poll stops waiting). */
  signal?: AbortSignal | undefined;
}

/** A `target: "group"` operation's context: the group `invoke` resolved (and checked). */
export interface GroupContext extends OpContext {
  group: GroupRecord;
}

/** A `target: "primitive"` operation's context: the primitive `invoke` resolved (and checked). */
export interface PrimitiveContext extends OpContext {
  primitive: PrimitiveRecord;
}

/** A data operation's context: also the store its type opened over the primitive's file. */
export interface DataContext<S> extends PrimitiveContext {
  store: S;
}

/** A file or object a call changed (fs path or storage key); `subtree`: everything under it too. */
export interface ChangedPath {
  path: string;
  subtree?: boolean;
}

/** Whether an operation only reads, or may change something (data, settings, a lease, the world outside). */
export type Access = "read" | "write";

/** What every operation declares besides its target and handler. */
interface OperationBase<I> {
  /** Also the audit action: `kv.set`, `group.create`. */
  name: string;
  /**
   * Whether the call only reads or may change something: data, a primitive's settings, a job's
   * lease, a signed URL's epoch, or the world outside (a vault request). A function decides from
   * the input as sent (a signed URL writes only for PUT). Declared on every operation, the one
   * source for what reads: the tool catalog's Read/Write (each tool is "write" when any of its
   * operations may write; @prim/mcp's tools-access test), the consent screen's read-only preset,
   * and read-only credentials (refused in `engine.invoke` from `accessOf`). `db.query` is "read":
   * whether a statement there may write is the credential's `db_exec` grant, itself a write tool.
   */
  access: Access | ((input: unknown) => Access);
  /**
   * For an operation that may write (required then: the registry test): whether it may delete or
   * overwrite stored data (what was there is gone), and whether repeating it with the same input
   * changes nothing more. With `openWorld` (it reaches beyond Prim: a vault fetch), the one
   * source of MCP's `destructiveHint`, `idempotentHint` and `openWorldHint` (@prim/mcp derives
   * each tool's from its operations').
   */
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
  /**
   * Allowlist tool required of a scoped principal: one name, any of several (`db_query` or
   * `db_exec`), or a function of the target primitive (stats, export: the type's read tool);
   * absent = any principal reaching the group.
   */
  tool?: string | readonly string[] | ((primitive: PrimitiveRecord) => string | readonly string[] | undefined);
  /** Rejects scoped principals with 403 `forbidden`. */
  accountOnly?: boolean;
  /** Refused with 423 while the primitive is paused; defaults to true for data operations. */
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
  /**
   * How many operations one metered call counts, from its input as sent (default 1): a batch
   * counts each entry (spec: "What counts as an operation"; the queue's batch routes).
   */
  units?: (input: unknown) => number;
  /**
   * Whether the call can add to the workspace's stored bytes: the cloud refuses it at Starter's
   * storage cap (spec, Enforcement 2: writes answer 429, reads and deletes keep working). A
   * function decides from the input as sent (a signed URL writes only for PUT). Declared on every
   * operation, beside `metered`, for the same reason (`test/operation-classes.test.ts` lists them).
   */
  writesStorage: boolean | ((input: unknown) => boolean);
  /** A feature Starter does not have (spec, Enforcement 4): 403 `plan_limit` there. */
  planFeature?: boolean;
  /**
   * A lookup a transport makes before the call it serves (MCP resolves a primitive by name, then
   * calls it): neither limited nor counted, so one tool call takes one token.
   */
  lookup?: boolean;
  input: z.ZodType<I>;
  /**
   * The files or objects a successful call changed (fs and storage writes), from its parsed
   * input and its audit note (a signed URL's key is known only once its grant is checked).
   * `engine.invoke` publishes them as change notices (`services.changes`) of the call's
   * primitive (the resolved target, else the audit note's subject); MCP resource subscriptions
   * hear them.
   */
  changes?: (input: I, audit: AuditNote) => readonly ChangedPath[];
}

/** What this call of `op` does (its `access`, decided for `input`). */
export function accessOf(op: AnyOperation, input: unknown): Access {
  return typeof op.access === "function" ? op.access(input) : op.access;
}

/** Whether some call of `op` may write: "write", or decided by the input (which may ask to write). */
export function mayWrite(op: AnyOperation): boolean {
  return op.access !== "read";
}

/** Whether this call of `op` can add stored bytes (its `writesStorage`, decided for `input`). */
export function writesStorage(op: AnyOperation, input: unknown): boolean {
  return typeof op.writesStorage === "function" ? op.writesStorage(input) : op.writesStorage;
}

/** An operation on one primitive's data; `invoke` answers 400 `wrong_type` for another type. */
export interface DataOperation<I = unknown, O = unknown, S = unknown> extends OperationBase<I> {
  target: "primitive";
  type: PrimitiveType;
  run(ctx: DataContext<S>, input: I): O | Promise<O>;
}

/** An operation on a primitive of any type, through its file or its catalog row (lifecycle). */
export interface PrimitiveOperation<I = unknown, O = unknown> extends OperationBase<I> {
  target: "primitive";
  type?: undefined;
  run(ctx: PrimitiveContext, input: I): O | Promise<O>;
}

/** An operation on one group. */
export interface GroupOperation<I = unknown, O = unknown> extends OperationBase<I> {
  target: "group";
  type?: undefined;
  run(ctx: GroupContext, input: I): O | Promise<O>;
}

/** An operation with no target resolved for it (creates, lists, signed URLs). */
export interface UntargetedOperation<I = unknown, O = unknown> extends OperationBase<I> {
  target: "none";
  type?: undefined;
  run(ctx: OpContext, input: I): O | Promise<O>;
}

/**
 * One operation, declared once: REST routes and MCP tools are thin mappings onto it, and all
 * policy (scope, allowlist, paused, audit) runs around it in `engine.invoke`, which resolves
 * the target its kind names and hands the handler exactly that.
 */
export type Operation<I = unknown, O = unknown, S = unknown> =
  | DataOperation<I, O, S>
  | PrimitiveOperation<I, O>
  | GroupOperation<I, O>
  | UntargetedOperation<I, O>;

/** Any operation, whatever its input, output and store (what registries hold). */
export type AnyOperation = Operation<any, any, any>;

type Declared<T> = Omit<T, "target" | "type" | "audited" | "metered"> & { audited?: boolean; metered?: boolean };

/**
 * Every definer takes the operation's name as a literal and requires the handler's result to
 * be what `@prim/wire` says that operation answers (OperationResults): a handler whose answer
 * drifts from the wire contract fails this package's build, not a client.
 */
type Named<N extends OperationName> = { name: N };

/**
 * The definer of one primitive type's data operations, typed with its store: each handler's
 * `ctx.store` is an `S`. Data operations are audited and metered unless they say otherwise.
 */
export function dataOp<S>(type: PrimitiveType) {
  return <N extends OperationName, I, O extends OperationResult<N>>(
    op: Declared<DataOperation<I, O, S>> & Named<N>,
  ): DataOperation<I, O, S> => ({
    target: "primitive",
    type,
    audited: true,
    metered: true,
    ...op,
  });
}

/** Identity helpers that infer I and O from the schema and handler, one per target kind. */
export const primitiveOp = <N extends OperationName, I, O extends OperationResult<N>>(
  op: Omit<PrimitiveOperation<I, O>, "target"> & Named<N>,
): PrimitiveOperation<I, O> => ({
  target: "primitive",
  ...op,
});
export const groupOp = <N extends OperationName, I, O extends OperationResult<N>>(
  op: Omit<GroupOperation<I, O>, "target"> & Named<N>,
): GroupOperation<I, O> => ({
  target: "group",
  ...op,
});
export const untargetedOp = <N extends OperationName, I, O extends OperationResult<N>>(
  op: Omit<UntargetedOperation<I, O>, "target"> & Named<N>,
): UntargetedOperation<I, O> => ({
  target: "none",
  ...op,
});
