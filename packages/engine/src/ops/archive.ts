import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { GroupArchive, ImportedPrimitive, ImportResult, ImportStatus } from "@prim/wire";
import { notFound, ServiceError } from "@prim/wire";
import { z } from "zod";
import { packGroup, type UnpackedArchive, unpackArchive } from "../archive/group-archive.js";
import { recipientFingerprint } from "../archive/secret-export.js";
import { allPrimitivesOf, type PrimitiveRecord } from "../catalog/catalog.js";
import { prefixedId } from "../core/ids.js";
import { groupNameSchema, nameSchema } from "../core/names.js";
import { queryBoolean } from "../core/pagination.js";
import { parseRecipient } from "../keys/transfer.js";
import { groupOp, type OpContext, untargetedOp } from "../primitives/operation.js";
import type { EngineServices } from "../primitives/services.js";
import { groupInfo, newGroupRecord } from "./groups.js";
import { takeOver, UPLOAD_TTL_MS, upload, uploadPath } from "./import-uploads.js";
import { takeSnapshot } from "./lifecycle.js";
import { newPrimitiveRecord, removePrimitive } from "./primitives.js";

/** How long a built export stays downloadable (resumable with `archive` and Range). */
export const ARCHIVE_TTL_MS = 60 * 60 * 1000;
export { UPLOAD_TTL_MS } from "./import-uploads.js";

const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "expected a sha256 in lowercase hex");

interface ArchiveMeta {
  id: string;
  group_id: string;
  size: number;
  sha256: string;
  created_at: number;
}

/** Deletes files in `dir` last written before `before` (ms since the epoch, file times). */
function sweep(dir: string, before: number): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path, { throwIfNoEntry: false });
    if (info !== undefined && info.mtimeMs < before) void rm(path, { force: true });
  }
}

export const groupExport = groupOp({
  name: "group.export",
  access: "read",
  accountOnly: true,
  audited: true,
  metered: true,
  writesStorage: false,
  planFeature: true,
  input: z.strictObject({
    recipient: z.string().optional(),
    archive: z
      .string()
      .regex(/^arc_[0-9a-z]{26}$/, "expected an archive id (arc_…)")
      .optional(),
  }),
  async run(ctx, input): Promise<GroupArchive> {
    const { services, group } = ctx;
    const dir = services.files.workDir("archives");
    const now = services.clock.now();
    sweep(dir, Date.now() - ARCHIVE_TTL_MS);
    const toArchive = (meta: ArchiveMeta): GroupArchive => ({
      archive: {
        id: meta.id,
        path: join(dir, `${meta.id}.tar`),
        size: meta.size,
        sha256: meta.sha256,
        filename: `${group.name}.prim.tar`,
        expires_at: meta.created_at + ARCHIVE_TTL_MS,
      },
    });
    ctx.audit.target = group.name;
    if (input.archive !== undefined) {
      const metaPath = join(dir, `${input.archive}.json`);
      const meta = existsSync(metaPath) ? (JSON.parse(readFileSync(metaPath, "utf8")) as ArchiveMeta) : null;
      const expired = meta !== null && now > meta.created_at + ARCHIVE_TTL_MS;
      if (meta === null || expired || meta.group_id !== group.id || !existsSync(join(dir, `${meta.id}.tar`))) {
        throw notFound(`archive '${input.archive}' of group '${group.name}' (archives are kept for an hour)`);
      }
      ctx.audit.detail = { archive: meta.id, resumed: true };
      return toArchive(meta);
    }
    const recipient = input.recipient ?? services.transferKey.publicKey;
    parseRecipient(recipient);
    const withValues = await mayExportValues(ctx, recipient);
    const id = prefixedId("arc", now);
    const part = join(dir, `${id}.tar.part`);
    const packed = await packGroup(services, group, withValues ? recipient : null, part);
    await rename(part, join(dir, `${id}.tar`));
    const meta: ArchiveMeta = { id, group_id: group.id, size: packed.size, sha256: packed.sha256, created_at: now };
    writeFileSync(join(dir, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
    ctx.audit.detail = {
      archive: id,
      primitives: packed.manifest.primitives.length,
      blobs: packed.manifest.blobs.length,
      bytes: packed.size,
      recipient: recipientFingerprint(recipient),
      vault_values: withValues,
    };
    return toArchive(meta);
  },
});

/**
 * Whether this export carries vault values (CLOUD.md: "Group archives carry vault values only for
 * a workspace whose owner enabled secret export"). Sealed for the workspace's own key they never
 * leave it usable (only this workspace opens them), so they go; for another key, the cloud's
 * policy decides (archive/secret-export.ts); the local engine has none and always exports them.
 */
async function mayExportValues(ctx: OpContext, recipient: string): Promise<boolean> {
  const { secretExport, transferKey } = ctx.services;
  if (secretExport === undefined || recipient === transferKey.publicKey) return true;
  return secretExport.allows(ctx.principal);
}

export const groupImportStatus = untargetedOp({
  name: "group.import_status",
  access: "read",
  accountOnly: true,
  audited: false,
  metered: false,
  writesStorage: false,
  input: z.strictObject({ group: nameSchema, sha256: sha256Schema.optional() }),
  async run(ctx, input): Promise<ImportStatus> {
    const { services } = ctx;
    const upload =
      input.sha256 === undefined
        ? null
        : {
            sha256: input.sha256,
            received: statSync(uploadPath(services, input.group, input.sha256), { throwIfNoEntry: false })?.size ?? 0,
          };
    return { recipient: services.transferKey.publicKey, upload };
  },
});

export const groupImport = untargetedOp({
  name: "group.import",
  access: "write",
  destructive: false,
  idempotent: false,
  accountOnly: true,
  audited: true,
  metered: true,
  writesStorage: true,
  planFeature: true,
  input: z.strictObject({
    group: groupNameSchema,
    body: z.custom<Readable>(
      (v) => typeof (v as AsyncIterable<Buffer> | null)?.[Symbol.asyncIterator] === "function",
      "expected the archive as the request body",
    ),
    sha256: sha256Schema,
    offset: z.coerce.number().int().nonnegative().default(0),
    replace: queryBoolean.default(false),
  }),
  async run(ctx, input): Promise<ImportResult> {
    const { services } = ctx;
    ctx.audit.group = input.group;
    ctx.audit.target = input.group;
    // Refused before a byte is stored: a group that holds data, without `replace`.
    await checkTarget(services, input.group, input.replace);
    const path = uploadPath(services, input.group, input.sha256);
    const finished = await takeOver(path, input.body as Readable);
    try {
      sweep(services.files.workDir("imports"), Date.now() - UPLOAD_TTL_MS);
      // One pass: unpacked as it arrives, kept for a resume until it is whole and checked.
      let whole: { sha256: string; size: number } | null = null;
      const unpacked = await unpackArchive(
        services,
        upload(path, input.offset, input.body as AsyncIterable<Buffer>, (w) => (whole = w)),
      ).catch(async (err: unknown) => {
        // A body that broke off keeps its bytes for a resume; a corrupt archive does not.
        if ((err as { code?: string }).code === "invalid_request") await rm(path, { force: true });
        throw err;
      });
      const received = whole as { sha256: string; size: number } | null;
      await rm(path, { force: true });
      if (received === null || received.sha256 !== input.sha256) {
        await unpacked.release();
        throw new ServiceError(
          "invalid_request",
          `the archive's sha256 is ${received?.sha256 ?? "unknown"}, not ${input.sha256}: it was damaged on the way; nothing was imported (upload it again from offset 0)`,
        );
      }
      try {
        const result = await commit(services, input.group, input.replace, unpacked);
        ctx.audit.detail = {
          sha256: input.sha256,
          bytes: received.size,
          primitives: result.imported.length,
          replaced: result.imported.filter((p) => p.replaced !== null).length,
        };
        return { ...result, sha256: input.sha256, bytes: received.size };
      } finally {
        unpacked.archiveKey?.fill(0);
        await unpacked.release();
      }
    } finally {
      finished();
    }
  },
});

async function checkTarget(services: EngineServices, name: string, replace: boolean): Promise<void> {
  const group = await services.catalog.getGroup(name);
  if (group === null || replace) return;
  const count = await services.catalog.countPrimitives(group.id);
  if (count > 0) {
    throw new ServiceError(
      "conflict",
      `group '${name}' is not empty (${count} primitive(s)); import with replace=true to replace the primitives the archive names (each is snapshotted first)`,
    );
  }
}

/**
 * Makes the archive's primitives part of group `name` (created if missing). A primitive of the
 * same type and name is replaced in place only with `replace`: snapshotted first
 * (`pre-import-<ms>`), then its data replaced; every other one is new, its `forked_from` naming
 * the archived source. Primitives of the group the archive does not name are left alone.
 */
async function commit(
  services: EngineServices,
  name: string,
  replace: boolean,
  unpacked: UnpackedArchive,
): Promise<Omit<ImportResult, "sha256" | "bytes">> {
  const { catalog, files } = services;
  await checkTarget(services, name, replace);
  let group = await catalog.getGroup(name);
  if (group === null) {
    group = newGroupRecord(services, name);
    await catalog.createGroup(group);
  }
  const existing = new Map<string, PrimitiveRecord>();
  for (const p of await allPrimitivesOf(catalog, group.id)) existing.set(`${p.type}/${p.name}`, p);
  const { manifest, staged, archiveKey } = unpacked;
  const imported: ImportedPrimitive[] = [];
  const created: string[] = [];
  try {
    for (const [i, source] of manifest.primitives.entries()) {
      const file = staged[i] as string;
      const fork = { sourceId: source.id, fromGroupId: group.id, toGroupId: group.id };
      const target = existing.get(`${source.type}/${source.name}`);
      if (target !== undefined) {
        const snapshot = await takeSnapshot(services, target, `pre-import-${services.clock.now()}`);
        files.fromArchive(source.type, file, archiveKey, { id: target.id, groupId: group.id });
        await files.restore(target.id, target.type, file);
        await files.forked(target.id, target.type, fork);
        imported.push({
          id: target.id,
          name: target.name,
          type: target.type,
          source_id: source.id,
          replaced: { snapshot: snapshot.id },
        });
        continue;
      }
      const record = newPrimitiveRecord(services, group, {
        name: source.name,
        type: source.type,
        forked_from: {
          id: source.id,
          name: source.name,
          type: source.type,
          group: manifest.group.name,
          snapshot: null,
        },
      });
      files.fromArchive(source.type, file, archiveKey, { id: record.id, groupId: group.id });
      created.push(record.id);
      await files.adopt(record.id, record.type, file, fork, true);
      await catalog.createPrimitive(record);
      imported.push({ id: record.id, name: record.name, type: record.type, source_id: source.id, replaced: null });
    }
  } catch (err) {
    // New primitives go; replaced ones keep their pre-import snapshot to restore.
    for (const id of created) await removePrimitive(services, id);
    throw err;
  }
  services.blobCollector.schedule();
  return { group: await groupInfo(services, group), imported };
}
