import { createHmac } from "node:crypto";
import { join } from "node:path";
import { type BlobStore, Cell, type Clock, LocalBlobStore, readOrCreateKey } from "@prim/engine";
import { S3BlobStore } from "./blobs/s3-blob-store.js";
import { createS3Client } from "./blobs/s3-client.js";
import type { ApiEnv } from "./env.js";

/**
 * The cell of this configuration: `PRIM_DATA_DIR`, locked; vault keys wrapped by
 * `PRIM_MASTER_KEY`, and signed URLs signed with a key derived from it, so that every cell
 * sharing it honours the others' URLs and keys (a workspace can move between them).
 */
export function openCell(env: ApiEnv, clock?: Clock): Cell {
  const master = env.PRIM_MASTER_KEY === undefined ? undefined : Buffer.from(env.PRIM_MASTER_KEY, "hex");
  return Cell.openLocal({
    dataDir: env.PRIM_DATA_DIR,
    durability: env.PRIM_DURABILITY,
    ...(clock === undefined ? {} : { clock }),
    ...(master === undefined
      ? {}
      : { masterKey: master, signingKey: createHmac("sha256", master).update("prim.url-signing.v1").digest() }),
  });
}

/**
 * The master key: `PRIM_MASTER_KEY`, else this cell's `<PRIM_DATA_DIR>/master.key` (the key
 * ring's own, made on first start; one cell alone, as several must share PRIM_MASTER_KEY).
 */
export function masterKeyOf(env: ApiEnv): Buffer {
  if (env.PRIM_MASTER_KEY !== undefined) return Buffer.from(env.PRIM_MASTER_KEY, "hex");
  return readOrCreateKey(join(env.PRIM_DATA_DIR, "master.key"));
}

/** `PRIM_BLOBS`: each workspace's blobs under its own prefix in S3, or its own local directory. */
export function blobStores(env: ApiEnv): (workspace: string) => BlobStore {
  if (env.PRIM_BLOBS === "s3") {
    const s3 = createS3Client({ endpoint: env.S3_ENDPOINT, region: env.S3_REGION });
    return (workspace) => new S3BlobStore(s3, env.S3_BUCKET as string, `blobs/${workspace}/`);
  }
  const dir = env.PRIM_BLOBS.slice("local:".length);
  return (workspace) => new LocalBlobStore(join(dir, workspace));
}
