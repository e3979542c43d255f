import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { type FileHandle, open, rm } from "node:fs/promises";
import { PassThrough } from "node:stream";
import { PRIMITIVE_TYPES, ServiceError } from "@prim/wire";
import { z } from "zod";
import type { GroupRecord } from "../catalog/catalog.js";
import { allPrimitivesOf } from "../catalog/catalog.js";
import { nameSchema } from "../core/names.js";
import { newArchiveKey, unwrapArchiveKey, type WrappedArchiveKey, wrapArchiveKey } from "../keys/transfer.js";
import type { EngineServices } from "../primitives/services.js";
import { checkImportedFiles } from "./imported-files.js";
import { END_OF_ARCHIVE, padding, readTar, TarFormatError, tarHeader } from "./tar.js";

/**
 * A group archive: one group's primitives — each one's SQLite file as a consistent copy — and
 * the blobs they name, in one ustar file (format in the engine README, "Group archives").
 */

export const MANIFEST_ENTRY = "prim-archive.json";
const PRIMITIVE_ENTRY_RE = /^primitives\/\d{4,}-[a-z]+\.sqlite$/;
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
const CHUNK = 1024 * 1024;
/** Blobs whose last write and fsync may still run while the next entries are read. */
const INGESTS_IN_FLIGHT = 4;
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

const manifestSchema = z.strictObject({
  format: z.literal("prim-group-archive"),
  version: z.literal(1),
  created_at: z.number().int(),
  group: z.strictObject({ id: z.string(), name: nameSchema }),
  primitives: z.array(
    z.strictObject({
      entry: z.string().regex(PRIMITIVE_ENTRY_RE),
      id: z.string().regex(/^[0-9A-Za-z_-]{1,64}$/),
      name: nameSchema,
      type: z.enum(PRIMITIVE_TYPES),
      created_at: z.number().int(),
      size: z.number().int().nonnegative(),
      sha256: sha256Hex,
    }),
  ),
  blobs: z.array(z.strictObject({ entry: z.string(), sha256: sha256Hex, size: z.number().int().nonnegative() })),
  vault: z
    .strictObject({
      alg: z.literal("X25519-HKDF-SHA256-A256GCM"),
      recipient: z.string(),
      ephemeral: z.string(),
      iv: z.string(),
      tag: z.string(),
      wrapped: z.string(),
    })
    .nullable(),
});

export type ArchiveManifest = z.infer<typeof manifestSchema>;
export type ArchivedPrimitive = ArchiveManifest["primitives"][number];

/** 400 `invalid_request` for an archive that is not what it says; nothing was imported. */
const corrupt = (why: string) =>
  new ServiceError("invalid_request", `archive is corrupt: ${why}; nothing was imported`);

/** Streams bytes into a file, hashing them. */
class HashingWriter {
  private readonly hash = createHash("sha256");
  size = 0;
  private constructor(private readonly file: FileHandle) {}
  static async create(path: string): Promise<HashingWriter> {
    return new HashingWriter(await open(path, "w", 0o600));
  }
  async write(chunk: Buffer): Promise<void> {
    this.hash.update(chunk);
    this.size += chunk.length;
    await this.file.write(chunk);
  }
  /** Closes the file (fsynced first with `sync`); answers the sha256 of what was written. */
  async close(sync: boolean): Promise<string> {
    if (sync) await this.file.sync();
    await this.file.close();
    return this.hash.digest("hex");
  }
  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}

const sidecars = (path: string) => [path, `${path}-wal`, `${path}-shm`];

/**
 * Writes `group`'s archive to `dest`: a consistent copy of each primitive made while writers
 * continue (one at a time, so the copies are each consistent, not one instant for the group),
 * vault values sealed for `recipient` (null: no values, only names, versions and grants; the
 * manifest's `vault` is then null), then the blobs they name, then the manifest with every
 * entry's sha256 (taken as the entry is written: nothing is read twice). Returns the archive's
 * size and sha256.
 */
export async function packGroup(
  services: EngineServices,
  group: GroupRecord,
  recipient: string | null,
  dest: string,
): Promise<{ size: number; sha256: string; manifest: ArchiveManifest }> {
  const { files, blobs } = services;
  const primitives = await allPrimitivesOf(services.catalog, group.id);
  const sealing = recipient !== null && primitives.some((p) => files.sealsForArchive(p.type));
  const archiveKey = sealing ? newArchiveKey() : null;
  const staged: string[] = [];
  let unpin = () => {};
  let out: HashingWriter | null = null;
  try {
    const refsOf: string[][] = [];
    for (const p of primitives) {
      const path = files.tmpPath(`archive-${p.id}`);
      staged.push(path);
      await files.backup(p.id, p.type, path);
      files.toArchive(p.type, path, archiveKey);
      refsOf.push([...new Set(files.blobRefsOfFile(p.type, path))].sort());
    }
    unpin = services.blobCollector.pin(refsOf.flat());
    const vault: WrappedArchiveKey | null =
      archiveKey === null || recipient === null ? null : wrapArchiveKey(archiveKey, recipient);
    archiveKey?.fill(0);
    const writer = await HashingWriter.create(dest);
    out = writer;
    const now = services.clock.now();
    /** Writes one entry; answers its content's sha256 when asked to hash it. */
    const put = async (name: string, size: number, body: AsyncIterable<Buffer> | Buffer, hashed = true) => {
      await writer.write(tarHeader(name, size, now));
      const hash = hashed ? createHash("sha256") : null;
      let n = 0;
      for await (const chunk of Buffer.isBuffer(body) ? [body] : body) {
        hash?.update(chunk);
        n += chunk.length;
        await writer.write(chunk);
      }
      if (n !== size) throw new Error(`${name} changed size while it was archived (${size} → ${n})`);
      const pad = padding(size);
      if (pad.length > 0) await writer.write(pad);
      return hash?.digest("hex") ?? "";
    };
    // Each primitive's file, then the blobs it names that no earlier one did: a reader sees
    // a primitive complete before the next begins (progress counts primitives).
    const entries: ArchivedPrimitive[] = [];
    const blobList: ArchiveManifest["blobs"] = [];
    const written = new Set<string>();
    for (const [i, p] of primitives.entries()) {
      const path = staged[i] as string;
      const entry = `primitives/${String(i + 1).padStart(4, "0")}-${p.type}.sqlite`;
      const size = statSync(path).size;
      const sha256 = await put(entry, size, createReadStream(path, { highWaterMark: CHUNK }));
      entries.push({ entry, id: p.id, name: p.name, type: p.type, created_at: p.created_at, size, sha256 });
      for (const hash of refsOf[i] ?? []) {
        if (written.has(hash)) continue;
        written.add(hash);
        // A blob's name is its sha256 (the importer's blob store hashes it again as it stores it).
        const blobSize = await blobs.size(hash);
        await put(`blobs/${hash}`, blobSize, blobs.read(hash), false);
        blobList.push({ entry: `blobs/${hash}`, sha256: hash, size: blobSize });
      }
    }
    const manifest: ArchiveManifest = {
      format: "prim-group-archive",
      version: 1,
      created_at: now,
      group: { id: group.id, name: group.name },
      primitives: entries,
      blobs: blobList,
      vault,
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    await put(MANIFEST_ENTRY, manifestBytes.length, manifestBytes);
    await writer.write(END_OF_ARCHIVE);
    out = null;
    // Not fsynced: a copy for the next hour, checked by its sha256 wherever it goes.
    return { size: writer.size, sha256: await writer.close(false), manifest };
  } catch (err) {
    await out?.abandon();
    await rm(dest, { force: true });
    throw err;
  } finally {
    unpin();
    for (const path of staged) for (const file of sidecars(path)) await rm(file, { force: true });
  }
}

/** An archive read and checked: each primitive's file staged, its blobs in the blob store. */
export interface UnpackedArchive {
  manifest: ArchiveManifest;
  /** Staged file of each manifest primitive, in manifest order. */
  staged: string[];
  /** The vault values' archive key (null when the archive has no vault). */
  archiveKey: Buffer | null;
  /** Removes staged files and lets collection have the blobs once nothing needs them. */
  release(): Promise<void>;
}

const BLOB_ENTRY = /^blobs\/([0-9a-f]{64})$/;

/**
 * Reads an archive as it streams in (nothing is read twice): stages each primitive's file and
 * puts each blob in the blob store (the store hashes what it keeps, so a blob is never stored
 * under another's name), then checks the manifest — the last entry — against every entry's size
 * and sha256. Anything wrong is 400 (`corrupt`) with every staged file removed; blobs it wrote
 * are named by nothing and are collected.
 */
export async function unpackArchive(services: EngineServices, source: AsyncIterable<Buffer>): Promise<UnpackedArchive> {
  const { files, blobs } = services;
  let manifest: ArchiveManifest | null = null;
  const staged = new Map<string, string>();
  const seen = new Map<string, { size: number; sha256: string }>();
  const unpins: (() => void)[] = [];
  /** Blob ingests finishing (each ends with an fsync): up to INGESTS_IN_FLIGHT at a time. */
  const pending: Promise<void>[] = [];
  // Sinks of entries whose bytes have not all come (the archive broke off inside one): aborted
  // on failure, so no file handle stays open and no partial blob is left in the store's tmp/.
  const unfinished = new Set<() => Promise<void>>();
  const release = async () => {
    for (const unpin of unpins) unpin();
    for (const file of staged.values()) for (const f of sidecars(file)) await rm(f, { force: true });
  };
  try {
    await readTar(source, {
      entry(name, size) {
        if (manifest !== null) throw corrupt(`entry '${name}' follows the manifest (it must be last)`);
        if (seen.has(name) || staged.has(name)) throw corrupt(`entry '${name}' appears twice`);
        if (name === MANIFEST_ENTRY) {
          if (size > MAX_MANIFEST_BYTES) throw corrupt("the manifest is too large");
          const parts: Buffer[] = [];
          return {
            write: (chunk) => void parts.push(Buffer.from(chunk)),
            end: () => {
              manifest = parseManifest(Buffer.concat(parts));
            },
          };
        }
        if (PRIMITIVE_ENTRY_RE.test(name)) return stageSink(name, size);
        const blob = BLOB_ENTRY.exec(name);
        if (blob !== null) return blobSink(name, size, blob[1] as string);
        throw corrupt(`entry '${name}' is not part of a group archive`);
      },
    });
    await Promise.all(pending);
    const m = manifest as ArchiveManifest | null;
    if (m === null) throw corrupt("it has no manifest (the last entry)");
    const listed = [...m.primitives, ...m.blobs];
    for (const e of listed) {
      const got = seen.get(e.entry);
      if (got === undefined) throw corrupt(`entry '${e.entry}' is missing`);
      if (got.size !== e.size || got.sha256 !== e.sha256) throw corrupt(`entry '${e.entry}' does not match its sha256`);
    }
    if (seen.size !== listed.length) throw corrupt("it holds entries its manifest does not list");
    const stagedFiles = m.primitives.map((p) => staged.get(p.entry) as string);
    // Before anything opens them here: each file is checked in a SQL host (imported-files.ts).
    await checkImportedFiles(services, m.primitives, stagedFiles);
    const archiveKey = m.vault === null ? null : unwrapArchiveKey(m.vault, services.transferKey);
    return { manifest: m, staged: stagedFiles, archiveKey, release };
  } catch (err) {
    for (const abort of unfinished) await abort();
    await Promise.allSettled(pending);
    await release();
    throw err instanceof TarFormatError ? corrupt(err.message) : err;
  }

  function stageSink(name: string, size: number) {
    const file = files.tmpPath("import");
    staged.set(name, file);
    const writing = HashingWriter.create(file);
    const abort = async () => {
      unfinished.delete(abort);
      await (await writing.catch(() => null))?.abandon();
    };
    unfinished.add(abort);
    return {
      write: async (chunk: Buffer) => (await writing).write(chunk),
      // fsynced: the file becomes a primitive's without being copied again.
      end: async () => {
        unfinished.delete(abort);
        seen.set(name, { size, sha256: await (await writing).close(true) });
      },
    };
  }

  function blobSink(name: string, size: number, hash: string) {
    unpins.push(services.blobCollector.pin([hash]));
    const body = new PassThrough({ highWaterMark: CHUNK });
    const ingesting = blobs.ingest(body, { maxBytes: size, inlineBelow: -1 });
    ingesting.catch(() => undefined); // awaited through `pending`; a failure also ends the writes
    const abort = async () => {
      unfinished.delete(abort);
      body.destroy(new Error("the archive broke off inside this entry"));
      await ingesting.catch(() => undefined); // the store removes its partial file
    };
    unfinished.add(abort);
    return {
      write: async (chunk: Buffer) => {
        if (!body.write(chunk)) {
          await Promise.race([new Promise((resolve) => body.once("drain", resolve)), ingesting]);
        }
      },
      // The next entry starts while this blob's fsync runs; a few at a time.
      end: async () => {
        unfinished.delete(abort);
        body.end();
        const checked = ingesting.then((result) => {
          if (result.kind !== "blob" || result.hash !== hash)
            throw corrupt(`entry '${name}' does not match its sha256`);
          seen.set(name, { size, sha256: result.hash });
        });
        checked.catch(() => undefined); // a failure is met through `pending`
        pending.push(checked);
        if (pending.length >= INGESTS_IN_FLIGHT) await pending[pending.length - INGESTS_IN_FLIGHT];
      },
    };
  }
}

function parseManifest(bytes: Buffer): ArchiveManifest {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw corrupt("the manifest is not JSON");
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw corrupt(`manifest ${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`);
  }
  const keys = new Set<string>();
  for (const p of parsed.data.primitives) {
    const key = `${p.type}/${p.name}`;
    if (keys.has(key)) throw corrupt(`the manifest names ${p.type} '${p.name}' twice`);
    keys.add(key);
  }
  for (const b of parsed.data.blobs) if (b.entry !== `blobs/${b.sha256}`) throw corrupt(`blob entry '${b.entry}'`);
  return parsed.data;
}
