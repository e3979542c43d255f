import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AUDIT_RETENTION_MS, AuditLog } from "./audit/audit-log.js";
import { BlobCollector } from "./blobs/collector.js";
import { LocalBlobStore } from "./blobs/local-blob-store.js";
import type { PrimitiveRecord } from "./catalog/catalog.js";
import { SqliteCatalog } from "./catalog/sqlite-catalog.js";
import { type Clock, systemClock } from "./core/clock.js";
import { type ErrorCode, isServiceError, ServiceError } from "./core/errors.js";
import { prefixedId } from "./core/ids.js";
import { readOrCreateKey } from "./core/key-file.js";
import { isAccount, type Principal, toolAllowed } from "./core/principal.js";
import type { PrimitiveType } from "./core/types.js";
import { parseInput } from "./core/validation.js";
import type { EngineServices } from "./engine-services.js";
import type { InvokeMeta, Invoker } from "./invoker.js";
import { OPERATIONS } from "./ops/index.js";
import type { AnyOperation, AuditNote, OpContext } from "./ops/operation.js";
import { resolveGroup, resolvePrimitive } from "./ops/scope.js";
import { SqlHost } from "./primitives/db/sql-host.js";
import type { PrimitiveDefinition } from "./primitives/definition.js";
import { PRIMITIVE_DEFINITIONS } from "./primitives/index.js";
import type { Embedder } from "./primitives/memory/embedder.js";
import { UrlSigner } from "./primitives/storage/signing.js";
import { LocalKeyRing } from "./primitives/vault/keyring.js";
import { DataDirLock } from "./storage/data-dir-lock.js";
import { PrimitiveFiles } from "./storage/primitive-files.js";

export interface LocalEngineOptions {
  /** Directory holding `catalog.sqlite` and `primitives/`. Created if missing. */
  dataDir: string;
  clock?: Clock;
  /** Audit buffer window in ms (default 10). */
  auditFlushMs?: number;
  /** How long audit entries are kept (default 30 days); older ones are pruned hourly. */
  auditRetentionMs?: number;
  /** Handles kept open (default 256). */
  maxOpenFiles?: number;
  /** Primitive types served (default: every implemented type). */
  definitions?: readonly PrimitiveDefinition[];
  /** Embeddings for memory recall (off by default: without it nothing calls the network). */
  embedder?: Embedder;
  /** Operations served (default: every built-in operation). */
  operations?: readonly AnyOperation[];
  /** Test-only: vault fetch may reach loopback addresses (127.0.0.0/8, ::1), nothing else private. */
  allowLoopbackFetch?: boolean;
  /**
   * SQL host processes for db primitives (default: `PRIM_SQL_HOSTS` if set, else
   * DEFAULT_SQL_HOSTS; see primitives/db/sql-host.ts).
   */
  sqlHosts?: number;
}

/** `PRIM_SQL_HOSTS`, when it is a positive integer. */
function sqlHostsFromEnv(): number | undefined {
  const n = Number(process.env.PRIM_SQL_HOSTS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * The engine: the operations registry and the one place where policy runs. Everything that
 * reaches data — REST, MCP, the CLI — calls `invoke` (the `Invoker` door; invoker.ts).
 */
export class Engine implements Invoker {
  readonly services: EngineServices;
  private readonly ops: ReadonlyMap<string, AnyOperation>;

  private readonly onClose: () => void;

  constructor(services: EngineServices, operations: readonly AnyOperation[] = OPERATIONS, onClose = () => {}) {
    this.services = services;
    this.ops = new Map(operations.map((op) => [op.name, op]));
    this.onClose = onClose;
  }

  /** A local engine: SQLite catalog and primitive files under `dataDir`. */
  static openLocal(options: LocalEngineOptions): Engine {
    mkdirSync(options.dataDir, { recursive: true });
    const lock = DataDirLock.acquire(options.dataDir);
    const clock = options.clock ?? systemClock;
    const catalog = new SqliteCatalog(options.dataDir);
    const definitions = new Map(
      (options.definitions ?? PRIMITIVE_DEFINITIONS).map((d) => [d.type, d as PrimitiveDefinition]),
    );
    const sqlHost = new SqlHost({ size: options.sqlHosts ?? sqlHostsFromEnv() });
    const keyRing = new LocalKeyRing(options.dataDir, clock);
    const vault = { keyRing, allowLoopbackFetch: options.allowLoopbackFetch ?? false };
    const files = new PrimitiveFiles(
      options.dataDir,
      definitions,
      { clock, sqlHost, embedder: options.embedder, vault },
      options.maxOpenFiles,
    );
    const audit = new AuditLog(catalog, options.auditFlushMs);
    audit.keep(options.auditRetentionMs ?? AUDIT_RETENTION_MS, clock);
    const blobs = new LocalBlobStore(join(options.dataDir, "blobs"), clock);
    const blobCollector = new BlobCollector(catalog, files, blobs, clock);
    const signer = new UrlSigner(readOrCreateKey(join(options.dataDir, "signing.key")));
    const services: EngineServices = {
      catalog,
      files,
      audit,
      clock,
      namespace: "local",
      blobs,
      blobCollector,
      signer,
      sqlHost,
    };
    return new Engine(services, options.operations, () => {
      keyRing.close();
      lock.release();
    });
  }

  operation(name: string): AnyOperation | undefined {
    return this.ops.get(name);
  }

  /** Runs operation `opName` for `principal` on `target` (a primitive id or group name/id). */
  async invoke<O = unknown>(
    principal: Principal,
    opName: string,
    target: string | null,
    input: unknown,
    meta: InvokeMeta = {},
  ): Promise<O> {
    const op = this.ops.get(opName);
    if (op === undefined) throw new Error(`unknown operation ${opName}`);
    if (op.accountOnly && !isAccount(principal)) {
      throw new ServiceError("forbidden", `${op.name} needs an account-level credential`);
    }
    const ctx = {
      principal,
      services: this.services,
      audit: { target: null, detail: null } as AuditNote,
      requestId: meta.requestId,
      signal: meta.signal,
    } as OpContext;

    if (op.target === "primitive") {
      const resolved = resolvePrimitive(this.services, principal, target);
      ctx.primitive = resolved instanceof Promise ? await resolved : resolved;
    } else if (op.target === "group") {
      ctx.group = await resolveGroup(this.services, principal, target);
    }

    try {
      this.checkPolicy(principal, op, ctx.primitive);
      if (op.type !== undefined) {
        ctx.store = this.services.files.handle(ctx.primitive.id, ctx.primitive.type).store;
      }
      const parsed = parseInput(op.input, input);
      const out = op.run(ctx, parsed);
      // Synchronous handlers (most data operations) skip a microtask turn.
      const result = (out instanceof Promise ? await out : out) as O;
      this.recordAudit(op, ctx, principal, null, meta.audit === true);
      return result;
    } catch (err) {
      this.recordAudit(op, ctx, principal, isServiceError(err) ? err.code : "internal_error", meta.audit === true);
      throw err;
    }
  }

  private closing: Promise<void> | null = null;

  /** Writes buffered audit entries, closes every file, releases the data directory. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.services.blobCollector.cancel();
      this.services.audit.stopPruning();
      await this.services.audit.flush();
      await this.services.files.closeAll();
      await this.services.sqlHost.close();
      await this.services.catalog.close();
      this.onClose();
    })();
    return this.closing;
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
    ctx: OpContext,
    principal: Principal,
    error: ErrorCode | null,
    force: boolean,
  ): void {
    if (!op.audited && !force) return;
    const note = ctx.audit;
    const subject =
      note.subject ??
      (ctx.primitive === undefined
        ? undefined
        : {
            id: ctx.primitive.id,
            type: ctx.primitive.type as PrimitiveType,
            name: ctx.primitive.name,
            group: ctx.primitive.group,
          });
    const groupName = subject?.group ?? ctx.group?.name;
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
      detail: error === null ? note.detail : { ...(note.detail ?? {}), error },
    });
  }
}
