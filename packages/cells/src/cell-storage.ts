import { createHmac } from "node:crypto";
import { join } from "node:path";
import { type BlobStore, Cell, type Clock, LocalBlobStore, readOrCreateKey } from "@prim/engine";
import type { ChangeFeed } from "@prim/wire";
import { S3BlobStore } from "./blobs/s3-blob-store.js";
import { createS3Client } from "./blobs/s3-client.js";
import type { CellEnv } from "./cell-env.js";

/*
 * A cell's storage, from its configuration: its data directory opened as a `Cell`, its master
 * key, each workspace's blob store and the store of workspace archives. apps/api opens them to
 * serve; `prim admin fsck` opens them the same way to check a workspace.
 */

type StorageEnv = Pick<
  CellEnv,
  "PRIM_DATA_DIR" | "PRIM_DURABILITY" | "PRIM_MASTER_KEY" | "PRIM_BLOBS" | "S3_ENDPOINT" | "S3_REGION" | "S3_BUCKET"
>;

/**
 * The cell of this configuration: `PRIM_DATA_DIR`, locked; vault keys wrapped by
 * `PRIM_MASTER_KEY`, and signed URLs signed with a key derived from it, so that every cell
 * sharing it honours the others' URLs and keys (a workspace can move between them). `changes`:
 * where its engines publish change notices (apps/api: Redis, so MCP processes hear them).
 */
export function openCell(env: StorageEnv, clock?: Clock, changes?: ChangeFeed): Cell {
  const master = env.PRIM_MASTER_KEY === undefined ? undefined : Buffer.from(env.PRIM_MASTER_KEY, "hex");
  return Cell.openLocal({
    dataDir: env.PRIM_DATA_DIR,
    durability: env.PRIM_DURABILITY,
    ...(clock === undefined ? {} : { clock }),
    ...(changes === undefined ? {} : { changes }),
    ...(master === undefined
      ? {}
      : { masterKey: master, signingKey: createHmac("sha256", master).update("prim.url-signing.v1").digest() }),
  });
}

/**
 * The master key: `PRIM_MASTER_KEY`, else this cell's `<PRIM_DATA_DIR>/master.key` (the key
 * ring's own, made on first start; one cell alone, as several must share PRIM_MASTER_KEY).
 */
export function masterKeyOf(env: StorageEnv): Buffer {
  if (env.PRIM_MASTER_KEY !== undefined) return Buffer.from(env.PRIM_MASTER_KEY, "hex");
  return readOrCreateKey(join(env.PRIM_DATA_DIR, "master.key"));
}

/** The local blob directory of `PRIM_BLOBS=local:<dir>` (null: blobs are in S3). */
export function localBlobDir(env: StorageEnv): string | null {
  return env.PRIM_BLOBS.startsWith("local:") ? env.PRIM_BLOBS.slice("local:".length) : null;
}

/** `PRIM_BLOBS`: each workspace's blobs under its own prefix in S3, or its own local directory. */
export function blobStores(env: StorageEnv): (workspace: string) => BlobStore {
  const dir = localBlobDir(env);
  if (dir === null) {
    const s3 = createS3Client({ endpoint: env.S3_ENDPOINT, region: env.S3_REGION });
    return (workspace) => new S3BlobStore(s3, env.S3_BUCKET as string, `blobs/${workspace}/`);
  }
  return (workspace) => new LocalBlobStore(join(dir, workspace));
}

/** Where archives of workspaces live: the blob store's `cells/` prefix (S3), or `<blobs dir>/_cells`. */
export function archiveStore(env: StorageEnv): BlobStore {
  const dir = localBlobDir(env);
  if (dir === null) {
    const s3 = createS3Client({ endpoint: env.S3_ENDPOINT, region: env.S3_REGION });
    return new S3BlobStore(s3, env.S3_BUCKET as string, "cells/");
  }
  return new LocalBlobStore(join(dir, "_cells"));
}
