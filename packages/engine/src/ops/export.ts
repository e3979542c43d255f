import { rmSync } from "node:fs";
import type { FileDownload } from "@prim/wire";
import { type PrimitiveType, ServiceError } from "@prim/wire";
import Database from "better-sqlite3";
import { z } from "zod";
import type { BlobStore } from "../blobs/blob-store.js";
import { primitiveOp } from "../primitives/operation.js";

export type { FileDownload };

const EXPORT_TOOL: Partial<Record<PrimitiveType, string>> = { db: "db_query", kv: "kv_get", storage: "storage_read" };

/** Largest object a storage export carries (its bytes go into one SQLite BLOB). */
export const MAX_EXPORT_OBJECT_BYTES = 512 * 1024 * 1024;

/** Makes a copy of a store's file self-contained: blob-backed objects get their bytes inline. */
async function inlineBlobs(path: string, blobs: BlobStore): Promise<void> {
  const db = new Database(path);
  try {
    const rows = db.prepare("SELECT key, size, blob FROM objects WHERE blob IS NOT NULL").all() as {
      key: string;
      size: number;
      blob: string;
    }[];
    const update = db.prepare("UPDATE objects SET body = ?, blob = NULL WHERE key = ?");
    for (const row of rows) {
      if (row.size > MAX_EXPORT_OBJECT_BYTES) {
        throw new ServiceError(
          "payload_too_large",
          `object '${row.key}' (${row.size} bytes) is too large to export; the limit per object is ${MAX_EXPORT_OBJECT_BYTES}`,
        );
      }
      const chunks: Buffer[] = [];
      for await (const chunk of blobs.read(row.blob)) chunks.push(chunk as Buffer);
      update.run(Buffer.concat(chunks), row.key);
    }
  } finally {
    db.close();
  }
}

/**
 * `GET /primitives/{id}/export` (and the db's own `/export`): a consistent SQLite file made
 * with SQLite's backup API while writers continue.
 */
export const primitiveExport = primitiveOp({
  name: "primitive.export",
  access: "read",
  // Other types have no export tool: no allowlist check, the handler answers wrong_type.
  tool: (p) => EXPORT_TOOL[p.type],
  refusedWhilePaused: true,
  audited: true,
  metered: true,
  writesStorage: false,
  input: z.strictObject({}),
  async run(ctx): Promise<FileDownload> {
    const { primitive: p, services } = ctx;
    const path = services.files.tmpPath(`export-${p.id}`);
    if (p.type === "db" || p.type === "kv" || p.type === "storage") {
      // The type's own backup (db: through the SQL host) or SQLite's backup API on the open file.
      await services.files.backup(p.id, p.type, path);
      if (p.type === "storage")
        await inlineBlobs(path, services.blobs).catch((err) => {
          rmSync(path, { force: true });
          throw err;
        });
    } else {
      rmSync(path, { force: true }); // tmpPath created it (empty, 0600)
      throw new ServiceError(
        "wrong_type",
        `export applies to db, kv and storage primitives; '${p.name}' is a ${p.type}`,
      );
    }
    return { download: { path, filename: `${p.name}.sqlite`, contentType: "application/vnd.sqlite3" } };
  },
});
