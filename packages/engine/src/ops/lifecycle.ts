import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { SnapshotInfo } from "@prim/wire";
import { notFound, type PrimitiveInfo, ServiceError } from "@prim/wire";
import { z } from "zod";
import type { PrimitiveRecord, SnapshotRecord } from "../catalog/catalog.js";
import { prefixedId } from "../core/ids.js";
import { nameSchema, primitiveNameSchema } from "../core/names.js";
import { decodeCursor, LIST_PAGE, limitSchema, type Page, toPage } from "../core/pagination.js";
import { primitiveOp } from "../primitives/operation.js";
import { type EngineServices, primitiveInfo } from "../primitives/services.js";
import { newPrimitiveRecord } from "./primitives.js";
import { resolveGroup } from "./scope.js";

export type { SnapshotInfo };

const toInfo = (s: SnapshotRecord): SnapshotInfo => ({
  id: s.id,
  name: s.name,
  created_at: s.created_at,
  primitive: s.primitive_id,
});

const snapshotPath = (services: EngineServices, primitiveId: string, snapshotId: string) =>
  join(services.files.snapshotDir(primitiveId), `${snapshotId}.sqlite`);

async function findSnapshot(services: EngineServices, p: PrimitiveRecord, ref: string): Promise<SnapshotRecord> {
  const snapshot = await services.catalog.findSnapshot(p.id, ref);
  if (snapshot === null) throw notFound(`snapshot '${ref}' of primitive '${p.name}'`);
  return snapshot;
}

/** Snapshot labels follow the naming rule, so they can never be mistaken for ids (`snap_…`). */
const labelSchema = nameSchema.refine((n) => !n.startsWith("snap_"), { message: "must not start with 'snap_'" });

export const snapshotCreate = primitiveOp({
  name: "primitive.snapshot",
  access: "write",
  destructive: false,
  idempotent: false,
  tool: "primitive_snapshot",
  audited: true,
  metered: true,
  writesStorage: true,
  planFeature: true,
  input: z.strictObject({ name: labelSchema.optional() }),
  async run(ctx, input): Promise<SnapshotInfo> {
    const info = await takeSnapshot(ctx.services, ctx.primitive, input.name ?? null);
    ctx.audit.target = info.id;
    return info;
  },
});

/** Snapshots `p` now (SQLite's backup API while writers continue), labelled `name` if given. */
export async function takeSnapshot(
  services: EngineServices,
  p: PrimitiveRecord,
  name: string | null,
): Promise<SnapshotInfo> {
  const now = services.clock.now();
  const id = prefixedId("snap", now);
  if (name !== null && (await services.catalog.findSnapshot(p.id, name)) !== null) {
    throw new ServiceError("already_exists", `snapshot '${name}' already exists`);
  }
  mkdirSync(services.files.snapshotDir(p.id), { recursive: true });
  const path = snapshotPath(services, p.id, id);
  try {
    await services.files.backup(p.id, p.type, path);
    const record: SnapshotRecord = {
      id,
      primitive_id: p.id,
      name,
      created_at: now,
      blob_refs: services.files.blobRefsOfFile(p.type, path),
    };
    await services.catalog.createSnapshot(record);
    return toInfo(record);
  } catch (err) {
    rmSync(path, { force: true });
    throw err;
  }
}

export const snapshotList = primitiveOp({
  name: "primitive.snapshots",
  access: "read",
  audited: false,
  metered: true,
  writesStorage: false,
  input: z.strictObject({ limit: limitSchema(LIST_PAGE), cursor: z.string().optional() }),
  async run(ctx, input): Promise<Page<SnapshotInfo>> {
    const before = input.cursor === undefined ? undefined : decodeCursor(input.cursor, z.object({ b: z.string() })).b;
    const rows = await ctx.services.catalog.listSnapshots(ctx.primitive.id, { before, limit: input.limit + 1 });
    return toPage(rows, input.limit, toInfo, (s) => ({ b: s.id }));
  },
});

export const snapshotRestore = primitiveOp({
  name: "primitive.restore",
  access: "write",
  destructive: true,
  idempotent: true,
  tool: "primitive_snapshot",
  audited: true,
  metered: true,
  writesStorage: true,
  planFeature: true,
  // Every file or object may have changed (the engine publishes for fs and storage only).
  changes: () => [{ path: "", subtree: true }],
  input: z.strictObject({ snapshot: z.string().min(1) }),
  async run(ctx, input): Promise<SnapshotInfo> {
    const { services, primitive: p } = ctx;
    const snapshot = await findSnapshot(services, p, input.snapshot);
    ctx.audit.target = snapshot.id;
    await services.files.restore(p.id, p.type, snapshotPath(services, p.id, snapshot.id));
    // Blobs only the replaced data named are garbage now.
    services.blobCollector.schedule();
    return toInfo(snapshot);
  },
});

/** `<name>-fork-<6 chars>`, shortened so the whole stays within the 63-character name limit. */
function forkName(name: string): string {
  const suffix = `-fork-${randomBytes(6)
    .toString("base64url")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "0")
    .slice(0, 6)}`;
  return `${name.slice(0, 63 - suffix.length)}${suffix}`;
}

export const primitiveFork = primitiveOp({
  name: "primitive.fork",
  access: "write",
  destructive: false,
  idempotent: false,
  tool: "primitive_fork",
  audited: true,
  metered: true,
  writesStorage: true,
  planFeature: true,
  input: z.strictObject({
    name: primitiveNameSchema.optional(),
    group: z.string().min(1).optional(),
    snapshot: z.string().min(1).optional(),
  }),
  async run(ctx, input): Promise<PrimitiveInfo> {
    const { services, primitive: source } = ctx;
    // A scoped principal reaches only its own group (403 group_mismatch for another).
    const group = await resolveGroup(services, ctx.principal, input.group ?? source.group_id);
    const snapshot = input.snapshot === undefined ? null : await findSnapshot(services, source, input.snapshot);
    const record = newPrimitiveRecord(services, group, {
      name: input.name ?? forkName(source.name),
      type: source.type,
      forked_from: {
        id: source.id,
        name: source.name,
        type: source.type,
        group: source.group,
        snapshot: snapshot?.id ?? null,
      },
    });
    const fork = { sourceId: source.id, fromGroupId: source.group_id, toGroupId: group.id };
    try {
      if (snapshot !== null) {
        await services.files.adopt(record.id, record.type, snapshotPath(services, source.id, snapshot.id), fork);
      } else {
        const staged = services.files.tmpPath(`fork-${record.id}`);
        try {
          await services.files.backup(source.id, source.type, staged);
          await services.files.adopt(record.id, record.type, staged, fork);
        } finally {
          rmSync(staged, { force: true });
        }
      }
      // A name taken in the target group fails here (409 already_exists), after the copy: the
      // catalog's unique constraint is the one check that cannot race.
      await services.catalog.createPrimitive(record);
    } catch (err) {
      await services.files.remove(record.id);
      throw err;
    }
    ctx.audit.target = record.id;
    ctx.audit.detail = {
      fork: { id: record.id, name: record.name, group: group.name },
      snapshot: snapshot?.id ?? null,
    };
    return primitiveInfo(services, record);
  },
});

function pauseOp(name: "primitive.pause" | "primitive.resume", paused: boolean) {
  return primitiveOp({
    name,
    access: "write",
    destructive: false,
    idempotent: true,
    accountOnly: true,
    audited: true,
    metered: true,
    writesStorage: false,
    input: z.strictObject({}),
    async run(ctx): Promise<PrimitiveInfo> {
      const { services, primitive: p } = ctx;
      if (p.paused !== paused) await services.catalog.updatePrimitive(p.id, { paused });
      return primitiveInfo(services, { ...p, paused });
    },
  });
}

export const primitivePause = pauseOp("primitive.pause", true);
export const primitiveResume = pauseOp("primitive.resume", false);
