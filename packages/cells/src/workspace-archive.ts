import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { cp, lstat, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import type { BlobStore, WrappedGroupKey } from "@prim/engine";
import { extract, pack } from "tar-stream";

/*
 * A workspace's files as one archive (a tar stream, stored content-addressed in the blob store
 * under the cells' prefix: its key is its sha256, so a reader checks it for free):
 *   files/<path>   the workspace's directory on the cell's disk (PRIM_DATA_DIR/<workspace>/),
 *                  without tmp/ and SQLite's -shm files (rebuilt on open);
 *   blobs/<path>   its blob directory, when blobs are local (in S3 every cell shares them);
 *   keys.json      the vault's wrapped group keys of its groups (useless without the cells'
 *                  shared PRIM_MASTER_KEY).
 * Taken only while the workspace is quiesced (nothing in flight, engine closed), so the files
 * are at rest and consistent with each other.
 */

export interface WorkspaceFiles {
  /** PRIM_DATA_DIR/<workspace> */
  dataDir: string;
  /** The workspace's local blob directory (null: blobs are in S3). */
  blobDir: string | null;
}

const MAX_ARCHIVE_BYTES = Number.MAX_SAFE_INTEGER;

/** Directories of a workspace's files (and their copies in `.ship` and staging) are 0700. */
const privateMkdir = (dir: string) => mkdir(dir, { recursive: true, mode: 0o700 });

/** `fn`, or null if what it reads has gone (a blob collected meanwhile, a missing directory). */
async function unlessGone<T>(fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** The files under `root` (entries that vanish while it walks are left out). */
async function* walk(root: string, skip: (rel: string) => boolean): AsyncGenerator<{ path: string; rel: string }> {
  const stack = (await unlessGone(() => readdir(root))) ?? [];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    if (skip(rel)) continue;
    const path = join(root, rel);
    const info = await unlessGone(() => lstat(path));
    if (info?.isDirectory()) {
      for (const name of (await unlessGone(() => readdir(path))) ?? []) stack.push(join(rel, name));
    } else if (info?.isFile()) {
      yield { path, rel: rel.split(sep).join("/") };
    }
  }
}

const skipData = (rel: string) => rel === "tmp" || rel.endsWith("-shm") || rel === "LOCK";

/** Packs the workspace into `store`; answers the archive's key and size. */
export async function packWorkspace(
  store: BlobStore,
  files: WorkspaceFiles,
  keys: readonly WrappedGroupKey[],
): Promise<{ key: string; bytes: number }> {
  const tar = pack();
  const writing = (async () => {
    // Opened before its entry is written, so a file that went meanwhile (a blob collected while
    // a ship packs: nothing names it any more) is left out rather than half-written.
    const add = async (name: string, path: string) => {
      const handle = await unlessGone(() => open(path, "r"));
      if (handle === null) return;
      const entry = tar.entry({ name, size: (await handle.stat()).size, mode: 0o600 });
      await pipeline(handle.createReadStream(), entry);
    };
    for await (const f of walk(files.dataDir, skipData)) await add(`files/${f.rel}`, f.path);
    if (files.blobDir !== null)
      for await (const f of walk(files.blobDir, () => false)) await add(`blobs/${f.rel}`, f.path);
    const json = Buffer.from(JSON.stringify(keys));
    tar.entry({ name: "keys.json", size: json.length, mode: 0o600 }, json);
    tar.finalize();
  })();
  writing.catch((err: Error) => tar.destroy(err));
  const ingested = await store.ingest(tar as AsyncIterable<Buffer>, { maxBytes: MAX_ARCHIVE_BYTES, inlineBelow: -1 });
  await writing;
  if (ingested.kind !== "blob") throw new Error("the archive was not stored");
  return { key: ingested.hash, bytes: ingested.size };
}

/** Entry names stay inside their directory. */
function safeRel(name: string): string | null {
  if (name.includes("\0") || name.startsWith("/") || name.split("/").some((part) => part === ".." || part === "")) {
    return null;
  }
  return name;
}

/**
 * Unpacks archive `key` as the workspace's files: into a staging directory first, checked
 * against its hash, then put in place (a stale copy there is replaced). Answers the keys.
 */
export async function unpackWorkspace(
  store: BlobStore,
  key: string,
  files: WorkspaceFiles,
): Promise<{ keys: WrappedGroupKey[]; bytes: number }> {
  const staging = `${files.dataDir}.incoming-${randomBytes(6).toString("hex")}`;
  await rm(staging, { recursive: true, force: true });
  await privateMkdir(join(staging, "files"));
  const hash = createHash("sha256");
  let bytes = 0;
  let keys: WrappedGroupKey[] = [];
  try {
    const tar = extract();
    const source = store.read(key);
    source.on("data", (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
    });
    const feeding = pipeline(source, tar);
    for await (const entry of tar) {
      const name = safeRel(entry.header.name);
      if (name === null) throw new Error(`archive ${key}: entry '${entry.header.name}' leaves its directory`);
      if (name === "keys.json") {
        const chunks: Buffer[] = [];
        for await (const chunk of entry) chunks.push(chunk as Buffer);
        keys = JSON.parse(Buffer.concat(chunks).toString("utf8")) as WrappedGroupKey[];
        continue;
      }
      const path = join(staging, name);
      await privateMkdir(dirname(path));
      await pipeline(entry, createWriteStream(path, { mode: 0o600 }));
    }
    await feeding;
    const sha = hash.digest("hex");
    if (sha !== key) throw new Error(`archive ${key}: its content does not match its hash (${sha})`);
    await rm(files.dataDir, { recursive: true, force: true });
    await privateMkdir(dirname(files.dataDir));
    await rename(join(staging, "files"), files.dataDir);
    if (files.blobDir !== null) {
      await privateMkdir(files.blobDir);
      await unlessGone(() => cp(join(staging, "blobs"), files.blobDir as string, { recursive: true, force: false }));
    }
    return { keys, bytes };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Copies the workspace's files aside (a ship: quiesced for the copy only, packed afterwards). */
export async function copyWorkspace(files: WorkspaceFiles, to: string): Promise<WorkspaceFiles> {
  await rm(to, { recursive: true, force: true });
  const dataDir = join(to, "files");
  await privateMkdir(dataDir);
  for await (const f of walk(files.dataDir, skipData)) {
    const target = join(dataDir, f.rel);
    await privateMkdir(dirname(target));
    await cp(f.path, target);
  }
  // Blobs are immutable and content-addressed: the live directory is packed as it is.
  return { dataDir, blobDir: files.blobDir };
}
