import {
  type Durability,
  type ErrorCode,
  type InvokeMeta,
  type Invoker,
  isAccount,
  isServiceError,
  type Principal,
  ServiceError,
  type Target,
  toolAllowed,
} from "@prim/wire";
import type { SecretExportPolicy } from "./archive/secret-export.js";
import type { GroupRecord, PrimitiveRecord } from "./catalog/catalog.js";
import { Cell, type CellOptions, type TenantOptions } from "./cell.js";
import { type ConsistencyReport, checkConsistency } from "./consistency.js";
import { prefixedId } from "./core/ids.js";
import { parseInput } from "./core/validation.js";
import type { Limiter } from "./limits.js";
import { pendingUploadBytes } from "./ops/import-uploads.js";
import { resolveGroup, resolvePrimitive, resolvePrimitiveRef } from "./ops/scope.js";
import { recoverOutboxes } from "./primitives/db/outbox-drain.js";
import {
  type AnyOperation,
  type AuditNote,
  accessOf,
  type ChangedPath,
  type OpContext,
} from "./primitives/operation.js";
import type { EngineServices } from "./primitives/services.js";
import { OPERATIONS } from "./registry.js";

/**
 * The local engine: one cell and one tenant, `local`, sharing one directory (`catalog.sqlite`,
 * `primitives/`, `blobs/`, the keys and the lock all directly under `dataDir`, as always).
 */
export interface LocalEngineOptions extends CellOptions, Omit<TenantOptions, "dataDir" | "catalog" | "blobs"> {
  /** Operations served (default: every built-in operation). */
  operations?: readonly AnyOperation[];
}

/** The workspace id of the local engine and of its principals. */
export const LOCAL_WORKSPACE = "local";

/**
 * The engine: the operations registry and the one place where policy runs. Everything that
 * reaches data — REST, MCP, the CLI — calls `invoke` (the `Invoker` door; invoker.ts).
 */
export class Engine implements Invoker {
  readonly services: EngineServices;
  private readonly ops: ReadonlyMap<string, AnyOperation>;

  private readonly onClose: () => void | Promise<void>;

  /**
   * An engine over `services` (primitives/services.ts documents each part). `onClose` runs after
   * the engine has closed its own tenant parts; the shared ones (`sqlHost`, key ring, signer)
   * belong to whoever composed them and are never closed here.
   */
  constructor(
    services: EngineServices,
    operations: readonly AnyOperation[] = OPERATIONS,
    onClose: () => void | Promise<void> = () => {},
    private readonly limiter?: Limiter,
  ) {
    this.services = services;
    this.ops = new Map(operations.map((op) => [op.name, op]));
    this.onClose = onClose;
    // What a crash left in db outboxes between a commit and its delivery (engine README, "db outbox").
    this.outboxRecovery = recoverOutboxes(services).catch(() => {});
  }

  /** Resolves once the outboxes found at start are drained. */
  readonly outboxRecovery: Promise<void>;

  /**
   * The engine of one workspace on a shared cell (cell.ts): only the tenant's parts are its own.
   * The cloud adds its limiter and its secret-export policy (archive/secret-export.ts).
   */
  static forWorkspace(
    cell: Cell,
    workspaceId: string,
    options: TenantOptions & {
      operations?: readonly AnyOperation[];
      limiter?: Limiter;
      secretExport?: SecretExportPolicy;
    } = {},
  ): Engine {
    return cell.openTenant(
      workspaceId,
      options,
      (services, release) =>
        new Engine({ ...services, secretExport: options.secretExport }, options.operations, release, options.limiter),
    );
  }

  /**
   * A local engine: one cell and its one tenant `local` in `dataDir` (the layout local data
   * directories have always had). Closing the engine closes the cell too.
   */
  static openLocal(options: LocalEngineOptions): Engine {
    const cell = Cell.openLocal(options);
    try {
      const { dataDir, operations, ...tenant } = options;
      return cell.openTenant(
        LOCAL_WORKSPACE,
        { ...tenant, dataDir },
        (services, release) =>
          new Engine(services, operations, async () => {
            release();
            await cell.close();
          }),
      );
    } catch (err) {
      void cell.close();
      throw err;
    }
  }

  /** The engine-wide durability (a primitive's own setting overrides it). */
  get durability(): Durability {
    return this.services.files.durabilityOf({ durability: null });
  }

  operation(name: string): AnyOperation | undefined {
    return this.ops.get(name);
  }

  /**
   * Runs operation `opName` for `principal` on `target`: a primitive id or a group name/id, or,
   * for a primitive's operation, a reference resolved here (`PrimitiveRef`: an id or a name in a
   * group the principal reaches).
   */
  async invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: Target,
    input: unknown,
    meta: InvokeMeta = {},
  ): Promise<O> {
    const op = this.ops.get(opName);
    if (op === undefined) throw new Error(`unknown operation ${opName}`);
    if (principal.workspace !== this.services.namespace) {
      // Decided before any lookup and the same for every target, so it reveals nothing about
      // what exists: a credential routed to another workspace's engine is simply not valid here.
      throw new ServiceError("invalid_token", "this credential belongs to another workspace");
    }
    if (op.accountOnly && !isAccount(principal)) {
      throw new ServiceError("forbidden", `${op.name} needs an account-level credential`);
    }
    // A read-only credential runs only what declares it reads (for this input: a signed URL for
    // PUT, a batch with a writing statement). SQL through db.query runs read-only too (db/ops.ts).
    // Like the account-only refusal, decided from the credential and the input alone, before any
    // lookup: it costs nothing, reveals nothing, and takes no operation from the plan.
    if (principal.readOnly === true && accessOf(op, input) === "write") {
      throw new ServiceError("forbidden", `${op.name} writes; this credential is read-only`);
    }
    // Limits come next: a refused call touches nothing, and every call of a credential that gets
    // this far (a 404 too) takes from its bucket.
    const limited =
      this.limiter === undefined || meta.system === true
        ? undefined
        : { principal, op, target, input, clientIp: meta.clientIp };
    if (limited !== undefined) {
      const admitted = this.limiter?.admit(limited);
      // Answered at once (a leased token), the call skips a microtask turn.
      const headers = admitted instanceof Promise ? await admitted : admitted;
      if (headers !== undefined) meta.onLimits?.(headers);
    }
    const ctx: OpContext = {
      principal,
      services: this.services,
      audit: { target: null, detail: null },
      requestId: meta.requestId,
      signal: meta.signal,
    };
    // What the call concerns, for its audit entry: the resolved target, else what the handler noted.
    let primitive: PrimitiveRecord | undefined;
    let group: GroupRecord | undefined;
    try {
      let out: unknown;
      let parsed: unknown;
      if (typeof target === "object" && target !== null && op.target !== "primitive") {
        throw new ServiceError("invalid_request", `${op.name} does not take a primitive reference`);
      }
      if (op.target === "primitive") {
        const resolved =
          typeof target === "object" && target !== null
            ? resolvePrimitiveRef(this.services, principal, target)
            : resolvePrimitive(this.services, principal, target);
        primitive = resolved instanceof Promise ? await resolved : resolved;
        if (limited !== undefined) this.limiter?.resolved?.(limited, primitive.id);
        this.checkPolicy(principal, op, primitive);
        parsed = parseInput(op.input, input);
        if (op.type === undefined) out = op.run({ ...ctx, primitive }, parsed);
        else {
          const store = this.services.files.handle(primitive.id, primitive.type).store;
          out = op.run({ ...ctx, primitive, store }, parsed);
        }
      } else if (op.target === "group") {
        group = await resolveGroup(this.services, principal, target as string | null);
        this.checkPolicy(principal, op, undefined);
        parsed = parseInput(op.input, input);
        out = op.run({ ...ctx, group }, parsed);
      } else {
        this.checkPolicy(principal, op, undefined);
        parsed = parseInput(op.input, input);
        out = op.run(ctx, parsed);
      }
      // Synchronous handlers (most data operations) skip a microtask turn.
      const result = (out instanceof Promise ? await out : out) as O;
      // A durable write is answered once the fsync covering it returned (sqlite/durable-sync.ts).
      const synced = this.synced(primitive);
      if (synced !== undefined) {
        this.services.syncs.writes++;
        await synced;
      }
      if (meta.system !== true) this.recordAudit(op, ctx.audit, principal, primitive, group, null, meta.audit === true);
      if (op.changes !== undefined) this.publishChanges(op.changes(parsed, ctx.audit), ctx.audit, primitive);
      return result;
    } catch (err) {
      const code = isServiceError(err) ? err.code : "internal_error";
      if (meta.system !== true) this.recordAudit(op, ctx.audit, principal, primitive, group, code, meta.audit === true);
      throw err;
    }
  }

  private closing: Promise<void> | null = null;

  /**
   * Bytes the workspace holds: every primitive's files and the blobs each references (a blob
   * two primitives share counts for both: the cloud's storage gauge errs on the high side), and
   * its unfinished archive uploads (ops/import-uploads.ts).
   */
  async storageBytes(): Promise<number> {
    let total = pendingUploadBytes(this.services);
    let after: string | undefined;
    for (;;) {
      const page = await this.services.catalog.listPrimitives({ after, limit: 500 });
      for (const p of page) total += this.services.files.sizeBytes(p.id, p.type);
      if (page.length < 500) return total;
      after = page.at(-1)?.id;
    }
  }

  /** Checks the catalog, the primitives' files and the blob store against each other (`prim admin fsck`). */
  checkConsistency(): Promise<ConsistencyReport> {
    return checkConsistency(this.services);
  }

  /**
   * Writes buffered audit entries, closes the tenant's files and catalog, then runs `onClose`
   * (for `openLocal`: closes the cell and releases the data directory). Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.services.blobCollector.cancel();
      await this.services.audit.close();
      await this.services.files.closeAll();
      await this.services.catalog.close();
      await this.onClose();
    })();
    return this.closing;
  }

  /** What the call's answer waits for: the fsyncs covering the catalog's and the primitive's writes. */
  private synced(primitive: PrimitiveRecord | undefined): Promise<unknown> | undefined {
    const catalog = this.services.catalog.synced?.();
    const file = primitive === undefined ? undefined : this.services.files.synced(primitive);
    if (catalog === undefined) return file;
    return file === undefined ? catalog : Promise.all([catalog, file]);
  }

  /**
   * Tells listeners (MCP resource subscriptions) which files or objects a successful write
   * changed: of the resolved primitive, else of the one the handler named (a signed URL's store).
   */
  private publishChanges(changed: readonly ChangedPath[], note: AuditNote, primitive: PrimitiveRecord | undefined) {
    const subject = primitive ?? note.subject;
    if (subject === undefined || (subject.type !== "fs" && subject.type !== "storage")) return;
    for (const { path, subtree } of changed) {
      this.services.changes.publish({
        workspace: this.services.namespace,
        primitive: subject.id,
        type: subject.type,
        path,
        ...(subtree === true ? { subtree } : {}),
      });
    }
  }

  private checkPolicy(principal: Principal, op: AnyOperation, primitive: PrimitiveRecord | undefined): void {
    if (op.type !== undefined && primitive !== undefined && primitive.type !== op.type) {
      throw new ServiceError(
        "wrong_type",
        `this route applies to ${op.type} primitives; primitive '${primitive.name}' is a ${primitive.type}`,
      );
    }
    // Principals without an allowlist (local, account) skip the check: it sits on the hot path.
    if (op.tool !== undefined && (principal.tools !== null || principal.narrowed !== undefined)) {
      const tool = typeof op.tool === "function" ? (primitive === undefined ? undefined : op.tool(primitive)) : op.tool;
      const anyOf = tool === undefined ? [] : typeof tool === "string" ? [tool] : tool;
      if (anyOf.length > 0 && !anyOf.some((t) => toolAllowed(principal, t))) {
        throw new ServiceError(
          "tool_not_allowed",
          `this credential's tool allowlist does not include ${anyOf.join(" or ")}`,
        );
      }
    }
    if (primitive?.paused && (op.refusedWhilePaused ?? op.type !== undefined)) {
      throw new ServiceError("paused", `primitive '${primitive.name}' is paused`);
    }
  }

  private recordAudit(
    op: AnyOperation,
    note: AuditNote,
    principal: Principal,
    primitive: PrimitiveRecord | undefined,
    group: GroupRecord | undefined,
    error: ErrorCode | null,
    force: boolean,
  ): void {
    if (!op.audited && !force) return;
    const subject =
      note.subject ??
      (primitive === undefined
        ? undefined
        : { id: primitive.id, type: primitive.type, name: primitive.name, group: primitive.group });
    const groupName = subject?.group ?? group?.name ?? note.group;
    if (groupName === undefined) return; // nothing resolved (e.g. a create that failed validation)
    const now = this.services.clock.now();
    this.services.audit.record({
      id: prefixedId("aud", now),
      ts: now,
      group: groupName,
      primitive: subject?.type ?? "group",
      primitive_id: subject?.id ?? null,
      instance: subject?.name ?? null,
      actor: principal.actor,
      action: op.name,
      target: note.target,
      detail: auditDetail(note.detail, error, principal.parents),
    });
  }
}

/** An entry's detail: the operation's own, the error of a refused call, a minted key's parents. */
function auditDetail(
  detail: AuditNote["detail"],
  error: ErrorCode | null,
  parents: readonly string[] | undefined,
): AuditNote["detail"] {
  if (error === null && parents === undefined) return detail;
  return {
    ...(detail ?? {}),
    ...(error === null ? {} : { error }),
    ...(parents === undefined ? {} : { parents: [...parents] }),
  };
}
